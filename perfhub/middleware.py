from django.contrib.auth.middleware import LoginRequiredMiddleware


class LoginRequiredEverywhere(LoginRequiredMiddleware):
    """Django's login-required middleware for every page, except the REST API.

    The API authenticates itself (token or session) and must answer anonymous calls with
    401 rather than a redirect to the login page, which scripts cannot follow.
    """

    def process_view(self, request, view_func, view_args, view_kwargs):  # type: ignore[no-untyped-def]
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
