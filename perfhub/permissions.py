from rest_framework.permissions import SAFE_METHODS, BasePermission

from perfhub.roles import can_edit


class ReadViewerWriteEditor(BasePermission):
    """Every API call needs a signed-in user (token or session); writes need the editor role."""

    message = "Writing needs the editor role; ask an admin to add you to the 'editor' group."

    def has_permission(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or can_edit(request.user)
