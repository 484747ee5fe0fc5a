"""PerfHub settings: one module, driven by environment variables (see README, "Configuration").

With no variables set it runs with zero servers: a SQLite file and Celery's filesystem broker,
both under var/. Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis) and
PERFHUB_S3_BUCKET (object storage shared by web and workers).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
import django
from django.core.exceptions import ImproperlyConfigured

from perfhub import queues
from perfhub.api_areas import TAG_DESCRIPTIONS as _API_TAGS
from perfhub.env import env_bool, env_choice, env_int, env_list, env_str, env_url
from perfhub.signin_roles import parse_role_map

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PERFHUB_VAR_DIR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once into var/ (never committed)."""
    if key := env_str("SECRET_KEY"):
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "perfhub",
    "artifacts",
    "baselines",
    "incidents",
    "reports",
    "knowledge",
]

# Evidence families: packages inside the artifacts app (one app label, one migration history).
# Each may hold templates/, a templatetags module and a tasks module; Django and Celery only
# look for those in installed apps, so they are wired here by name (nothing is imported).
PERFHUB_FAMILIES = [
    "artifacts.runs",
    "artifacts.traces",
    "artifacts.nsight",
    "artifacts.fabric",
    "artifacts.bundles",
    "artifacts.metrics",
    "artifacts.jobs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "perfhub.middleware.LoginRequiredEverywhere",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last, as django-axes asks: it turns a locked-out sign-in into its lockout response
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "perfhub.urls"
WSGI_APPLICATION = "perfhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [
            BASE_DIR / "templates",
            *(BASE_DIR.joinpath(*family.split("."), "templates") for family in PERFHUB_FAMILIES),
        ],
        "APP_DIRS": True,
        "OPTIONS": {
            "libraries": {
                "trace_tags": "artifacts.traces.templatetags",
                "nsight_tags": "artifacts.nsight.templatetags",
                "fabric": "artifacts.fabric.templatetags",
            },
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "perfhub.context_processors.roles",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'perfhub.sqlite3'}"),
        conn_max_age=env_int("PERFHUB_DB_CONN_MAX_AGE", 60),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file (not in-memory) test database, so a real worker process can share it in tests;
    # one per test process, so two suites running at once don't delete each other's.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test_perfhub_{os.getpid()}.sqlite3")}
    # WAL + a busy timeout let the web process and the worker write without "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # No parallel workers per query by default: pages and tasks run short indexed queries, and
    # with a LIMIT the planner's parallel plans walk the wrong index (0.5 s instead of 1 ms
    # for a run's recent runs at 333,000 runs; docs/baselines.md) while taking cores from
    # other requests. PERFHUB_DB_PARALLEL_WORKERS=N gives them back.
    _workers = env_int("PERFHUB_DB_PARALLEL_WORKERS", 0)
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
        f"-c max_parallel_workers_per_gather={_workers}"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Files: Django's storage API, filesystem by default, S3-compatible when configured ------
MEDIA_ROOT = Path(env_str("PERFHUB_MEDIA_ROOT", str(VAR_DIR / "media"))).resolve()
S3_BUCKET = env_str("PERFHUB_S3_BUCKET")
if S3_BUCKET:
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": env_str("PERFHUB_S3_ENDPOINT_URL") or None,
            "region_name": env_str("PERFHUB_S3_REGION") or None,
            "location": env_str("PERFHUB_S3_PREFIX", "perfhub"),
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
else:
    _default_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT)},
    }
STORAGES = {
    "default": _default_storage,
    # As production serves them, under `make run` too (collectstatic first): content-hashed
    # names cached for a year, with gzip and brotli copies WhiteNoise picks per request.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "perfhub.staticfinders.PlotlyFinder",
]
# Files not collected (new since the last collectstatic) are served from the finders too.
WHITENOISE_USE_FINDERS = True
# A file not collected yet (a checkout before `collectstatic`, the test suite) still renders,
# under its plain name served from the finders, instead of failing the page.
WHITENOISE_MANIFEST_STRICT = False
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
# Uploads are never served from a public URL: downloads go through a login-checked view.
MEDIA_URL = "/not-served/"

PERFHUB_MAX_UPLOAD_BYTES = env_int("PERFHUB_MAX_UPLOAD_BYTES", 2 * 1024**3)
PERFHUB_MAX_DECOMPRESSED_BYTES = env_int("PERFHUB_MAX_DECOMPRESSED_BYTES", 32 * 1024**3)
PERFHUB_MAX_GZIP_RATIO = env_int("PERFHUB_MAX_GZIP_RATIO", 200)
PERFHUB_PAGE_SIZE = env_int("PERFHUB_PAGE_SIZE", 50)
# A large-message nccl-tests run below this share (%) of its hardware's peak busbw is a
# finding (docs/efficiency.md); a profile's limits.efficiency_threshold_pct overrides it.
PERFHUB_EFFICIENCY_THRESHOLD_PCT = env_int("PERFHUB_EFFICIENCY_THRESHOLD_PCT", 70)
if not 1 <= PERFHUB_EFFICIENCY_THRESHOLD_PCT <= 100:
    raise ValueError("PERFHUB_EFFICIENCY_THRESHOLD_PCT must be a percentage from 1 to 100")
FILE_UPLOAD_TEMP_DIR = str(VAR_DIR / "tmp")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

# --- Celery ---------------------------------------------------------------------------------
_BROKER_DIR = VAR_DIR / "broker"
# The filesystem transport ignores the host; naming one keeps kombu from warning "No
# hostname was supplied" on every command that queues a task.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("queue", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),  # default is ./control, in the checkout
        "store_processed": False,
    }
CELERY_TASK_DEFAULT_QUEUE = env_str("PERFHUB_TASK_QUEUE", "celery")
# One queue per kind of work (perfhub/queues.py); perfhub/celery.py declares them all, so a
# worker without -Q reads every one.
CELERY_TASK_ROUTES = queues.task_routes(CELERY_TASK_DEFAULT_QUEUE)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for another worker
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # parses are long; don't hoard them on one worker
CELERY_TASK_ALWAYS_EAGER = env_bool("PERFHUB_TASKS_EAGER", False)
# A parse that has not moved for this long, run by no live worker, is re-queued once
# (artifacts/stalls.py); celery beat (`make run` starts it) checks every minute.
PERFHUB_PARSE_STALL_SECONDS = max(30, env_int("PERFHUB_PARSE_STALL_SECONDS", 180))
CELERY_BEAT_SCHEDULE = {
    "requeue-stalled-parses": {"task": "artifacts.requeue_stalled", "schedule": 60.0},
    # monthly measurement partitions made months ahead (PostgreSQL; artifacts/runs/partitions.py)
    "measurement-partitions": {"task": "artifacts.runs.ensure_partitions", "schedule": 86400.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Auth, API ------------------------------------------------------------------------------
LOGIN_URL = "login"

# --- Sign-in throttling (django-axes) ---------------------------------------------------------
# Failed password sign-ins are counted per user name and client address; past the limit that
# pair is locked out for the cool-off, and a success resets the count. Token (API) requests
# are not password sign-ins and are not counted.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = max(1, env_int("PERFHUB_LOGIN_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = max(1, env_int("PERFHUB_LOGIN_COOLOFF_MINUTES", 15)) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "account/locked_out.html"
AXES_VERBOSE = False
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Company sign-in: OpenID Connect and LDAP, each only when configured (README) -----------
# Local accounts keep working beside them (ModelBackend stays last), and django-axes stays
# first so a locked-out pair is refused before any directory is asked. Their libraries are
# imported only when configured: a plain install never loads ldap or mozilla_django_oidc.
PERFHUB_OIDC_CLIENT_ID = env_str("PERFHUB_OIDC_CLIENT_ID")
PERFHUB_OIDC_ISSUER = env_str("PERFHUB_OIDC_ISSUER").rstrip("/")
PERFHUB_OIDC_ENABLED = bool(PERFHUB_OIDC_CLIENT_ID)
PERFHUB_OIDC_NAME = env_str("PERFHUB_OIDC_NAME", "company account")
PERFHUB_OIDC_USERNAME_CLAIM = env_str("PERFHUB_OIDC_USERNAME_CLAIM", "preferred_username")
PERFHUB_OIDC_GROUPS_CLAIM = env_str("PERFHUB_OIDC_GROUPS_CLAIM", "groups")
PERFHUB_OIDC_ROLE_MAP = parse_role_map(
    "PERFHUB_OIDC_ROLE_MAP", env_str("PERFHUB_OIDC_ROLE_MAP"), separators=",;"
)
PERFHUB_OIDC_REQUIRE_ROLE = env_bool("PERFHUB_OIDC_REQUIRE_ROLE", False)
OIDC_RP_CLIENT_ID = PERFHUB_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = env_str("PERFHUB_OIDC_CLIENT_SECRET")
# Unset endpoints come from the issuer's discovery document at the first sign-in.
OIDC_OP_AUTHORIZATION_ENDPOINT = env_str("PERFHUB_OIDC_AUTHORIZATION_ENDPOINT")
OIDC_OP_TOKEN_ENDPOINT = env_str("PERFHUB_OIDC_TOKEN_ENDPOINT")
OIDC_OP_USER_ENDPOINT = env_str("PERFHUB_OIDC_USERINFO_ENDPOINT")
OIDC_OP_JWKS_ENDPOINT = env_str("PERFHUB_OIDC_JWKS_URI")
OIDC_RP_SIGN_ALGO = env_choice(
    "PERFHUB_OIDC_SIGN_ALGO", ("rs256", "es256", "hs256"), "rs256"
).upper()
OIDC_RP_SCOPES = env_str("PERFHUB_OIDC_SCOPES", "openid email profile")
OIDC_USE_PKCE = True  # the code is useless to whoever intercepts the redirect
# Kept in the session for the provider's end-session call at sign-out (id_token_hint).
OIDC_STORE_ID_TOKEN = True
OIDC_OP_LOGOUT_ENDPOINT = env_str("PERFHUB_OIDC_END_SESSION_ENDPOINT")
PERFHUB_OIDC_PROVIDER_LOGOUT = env_bool("PERFHUB_OIDC_PROVIDER_LOGOUT", True)
OIDC_TIMEOUT = env_int("PERFHUB_OIDC_TIMEOUT", 10)
OIDC_VERIFY_SSL = env_bool("PERFHUB_OIDC_VERIFY_TLS", True)
# A refused sign-in (no user name claim, or no group with a role) says so on the login page.
LOGIN_REDIRECT_URL_FAILURE = "/login/?signin=refused"
if PERFHUB_OIDC_ENABLED:
    if not (PERFHUB_OIDC_ISSUER or OIDC_OP_AUTHORIZATION_ENDPOINT):
        raise ImproperlyConfigured(
            "PERFHUB_OIDC_CLIENT_ID needs PERFHUB_OIDC_ISSUER (or endpoints)"
        )
    AUTHENTICATION_BACKENDS.insert(1, "perfhub.auth_oidc.PerfHubOIDCBackend")

AUTH_LDAP_SERVER_URI = env_str("PERFHUB_LDAP_SERVER_URI")
PERFHUB_LDAP_ROLE_MAP = parse_role_map(
    "PERFHUB_LDAP_ROLE_MAP", env_str("PERFHUB_LDAP_ROLE_MAP"), separators=";"
)
if AUTH_LDAP_SERVER_URI:
    try:
        from perfhub.ldap_settings import ldap_settings
    except ImportError as exc:  # the optional extra is not installed
        raise ImproperlyConfigured(
            f"PERFHUB_LDAP_SERVER_URI is set but LDAP support is not installed ({exc}): "
            "apt-get install libldap2-dev libsasl2-dev, then pip install -e '.[ldap]'"
        ) from exc

    globals().update(
        ldap_settings(
            bind_dn=env_str("PERFHUB_LDAP_BIND_DN"),
            bind_password=env_str("PERFHUB_LDAP_BIND_PASSWORD"),
            user_base=env_str("PERFHUB_LDAP_USER_SEARCH_BASE"),
            user_filter=env_str("PERFHUB_LDAP_USER_FILTER", "(uid=%(user)s)"),
            group_base=env_str("PERFHUB_LDAP_GROUP_SEARCH_BASE"),
            group_type=env_choice(
                "PERFHUB_LDAP_GROUP_TYPE",
                ("groupofnames", "groupofuniquenames", "posixgroup"),
                "groupofnames",
            ),
            start_tls=env_bool("PERFHUB_LDAP_START_TLS", False),
            role_map=PERFHUB_LDAP_ROLE_MAP,
            require_role=env_bool("PERFHUB_LDAP_REQUIRE_ROLE", False),
        )
    )
    AUTHENTICATION_BACKENDS.insert(1, "perfhub.auth_ldap.PerfHubLDAPBackend")

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes anonymous API calls 401, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["perfhub.permissions.ReadViewerWriteEditor"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": PERFHUB_PAGE_SIZE,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "perfhub.schema.AreaAutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "PerfHub API",
    "DESCRIPTION": "Ingest performance evidence and read what PerfHub made of it. "
    "[Back to PerfHub](/) · [API root](/api/v1/) · [your API token](/account/token/)",
    # Request bodies get their own components, so an upload's ``file`` is a binary string
    # (Swagger's "Try it out" then offers a file picker) rather than a URI.
    "COMPONENT_SPLIT_REQUEST": True,
    "TAGS": [{"name": tag, "description": text} for tag, text in _API_TAGS.items()],
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- E-mail: alert notifications (baselines/notify.py) -----------------------------------------
# Zero-config default: each message is written as a file under var/mail/, so a laptop or an
# air-gapped cluster needs no mail server and nothing is lost; production sets
# PERFHUB_EMAIL_BACKEND=smtp and the host. Bad values fail at start-up, not at the first alert.
_EMAIL_BACKENDS = {
    "file": "django.core.mail.backends.filebased.EmailBackend",
    "console": "django.core.mail.backends.console.EmailBackend",
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "dummy": "django.core.mail.backends.dummy.EmailBackend",
}
_email_backend = env_choice("PERFHUB_EMAIL_BACKEND", tuple(_EMAIL_BACKENDS), "file")
_email_options: dict[str, Any] = {}
if _email_backend == "file":
    _email_options["file_path"] = env_str("PERFHUB_EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
elif _email_backend == "smtp":
    _security = env_choice("PERFHUB_EMAIL_SECURITY", ("starttls", "ssl", "none"), "starttls")
    _email_options = {
        "host": env_str("PERFHUB_EMAIL_HOST", "localhost"),
        "port": env_int("PERFHUB_EMAIL_PORT", {"starttls": 587, "ssl": 465, "none": 25}[_security]),
        "username": env_str("PERFHUB_EMAIL_USER"),
        "password": env_str("PERFHUB_EMAIL_PASSWORD"),
        "use_tls": _security == "starttls",
        "use_ssl": _security == "ssl",
        # Django's default is no timeout: an unanswering server would hang a worker for good.
        "timeout": env_int("PERFHUB_EMAIL_TIMEOUT", 30),
    }
if django.VERSION >= (6, 1):
    # Django 6.1 replaces EMAIL_BACKEND and the EMAIL_* connection settings with MAILERS
    # (the old names are deprecated there, and refused once MAILERS is defined).
    MAILERS = {"default": {"BACKEND": _EMAIL_BACKENDS[_email_backend], "OPTIONS": _email_options}}
else:
    # Django 5.2/6.0: the same values under the names MAILERS' OPTIONS replace.
    _LEGACY_EMAIL_NAMES = {
        "file_path": "EMAIL_FILE_PATH",
        "host": "EMAIL_HOST",
        "port": "EMAIL_PORT",
        "username": "EMAIL_HOST_USER",
        "password": "EMAIL_HOST_PASSWORD",
        "use_tls": "EMAIL_USE_TLS",
        "use_ssl": "EMAIL_USE_SSL",
        "timeout": "EMAIL_TIMEOUT",
    }
    EMAIL_BACKEND = _EMAIL_BACKENDS[_email_backend]
    globals().update({_LEGACY_EMAIL_NAMES[k]: v for k, v in _email_options.items()})
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "PerfHub <perfhub@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Links in notifications must be absolute: they are read outside the browser session.
PERFHUB_BASE_URL = env_url("PERFHUB_BASE_URL", "http://127.0.0.1:8000")
# Publishing a post-mortem: "off" (reviews are comments only), "resolved" (no open change
# requests) or "approved" (and one approval by someone other than its last author).
PERFHUB_POSTMORTEM_REVIEW = env_choice(
    "PERFHUB_POSTMORTEM_REVIEW", ("off", "resolved", "approved"), "resolved"
)
# The alerting webhooks' call log: calls older than this many days that changed no incident
# are dropped as new calls arrive (0 keeps them all); those that did are an incident's
# provenance and stay. Each client address may call the receivers this often (DRF rate).
PERFHUB_WEBHOOK_LOG_DAYS = env_int("PERFHUB_WEBHOOK_LOG_DAYS", 30)
PERFHUB_WEBHOOK_RATE = env_str("PERFHUB_WEBHOOK_RATE", "600/min")
if not re.fullmatch(r"\d+/(s|sec|second|m|min|minute|h|hour|d|day)", PERFHUB_WEBHOOK_RATE):
    raise ValueError("PERFHUB_WEBHOOK_RATE must read like 600/min (per s, min, hour or day)")
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {"webhooks": PERFHUB_WEBHOOK_RATE}

# --- Security -------------------------------------------------------------------------------
_HTTPS = env_bool("PERFHUB_HTTPS", False)
SESSION_COOKIE_SECURE = _HTTPS
CSRF_COOKIE_SECURE = _HTTPS
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "SAMEORIGIN"
if _HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("PERFHUB_LOG_LEVEL", "INFO")},
}
