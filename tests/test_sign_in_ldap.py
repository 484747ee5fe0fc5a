"""LDAP sign-in against Debian's slapd, started here on a free loopback port.

The directory (mdb backend, in a temp folder) is filled with ldapadd: a search account,
people, and groupOfNames groups. People sign in through PerfHub's ordinary login form.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.local_servers import free_port, stop, wait_for_port

pytestmark = pytest.mark.django_db

SLAPD = shutil.which("slapd") or ("/usr/sbin/slapd" if Path("/usr/sbin/slapd").exists() else None)
LDAPADD = shutil.which("ldapadd")
pytest.importorskip(
    "django_auth_ldap", reason="LDAP support not installed (pip install -e '.[ldap]'; make does)"
)
if not (SLAPD and LDAPADD):
    pytest.skip(
        "slapd and ldapadd are not installed (apt-get install slapd ldap-utils; .ci/run does)",
        allow_module_level=True,
    )
ROOT = Path(__file__).resolve().parent.parent
BASE = "dc=example,dc=org"
ADMIN_DN, ADMIN_PW = f"cn=admin,{BASE}", "admin-pw"
SERVICE_DN, SERVICE_PW = f"cn=perfhub,{BASE}", "service-pw"
EDITORS, READERS = f"cn=perf-admins,ou=groups,{BASE}", f"cn=perf,ou=groups,{BASE}"

SLAPD_CONF = """\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile {folder}/slapd.pid
database mdb
maxsize 16777216
suffix "{base}"
rootdn "{admin}"
rootpw {admin_pw}
directory {folder}/db
# people bind with their own password; the search account reads; nobody else sees anything
access to attrs=userPassword by self write by anonymous auth by * none
access to * by dn.exact="{service}" read by self read by * none
"""


def _person(uid: str, given: str) -> str:
    return f"""dn: uid={uid},ou=people,{BASE}
objectClass: inetOrgPerson
uid: {uid}
cn: {given} Example
givenName: {given}
sn: Example
mail: {uid}@example.org
userPassword: pw-{uid}
"""


LDIF = f"""dn: {BASE}
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: {SERVICE_DN}
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: perfhub
userPassword: {SERVICE_PW}

dn: ou=people,{BASE}
objectClass: organizationalUnit
ou: people

dn: ou=groups,{BASE}
objectClass: organizationalUnit
ou: groups

{_person("dana", "Dana")}
{_person("erin", "Erin")}
{_person("frank", "Frank")}
dn: {EDITORS}
objectClass: groupOfNames
cn: perf-admins
member: uid=dana,ou=people,{BASE}

dn: {READERS}
objectClass: groupOfNames
cn: perf
member: uid=dana,ou=people,{BASE}
member: uid=erin,ou=people,{BASE}
"""


@dataclass(frozen=True)
class Directory:
    uri: str

    def membership(self, change: str, group: str, uid: str) -> None:
        """``change`` is ``add`` or ``delete``: one member of one group."""
        member = f"uid={uid},ou=people,{BASE}"
        self.modify(f"dn: {group}\nchangetype: modify\n{change}: member\nmember: {member}\n")

    def modify(self, ldif: str) -> None:
        subprocess.run(
            ["ldapmodify", "-x", "-H", self.uri, "-D", ADMIN_DN, "-w", ADMIN_PW],
            input=ldif.encode(),
            check=True,
            capture_output=True,
        )


@pytest.fixture(scope="module")
def directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Directory]:
    folder = tmp_path_factory.mktemp("slapd")
    (folder / "db").mkdir()
    conf = folder / "slapd.conf"
    conf.write_text(
        SLAPD_CONF.format(
            folder=folder, base=BASE, admin=ADMIN_DN, admin_pw=ADMIN_PW, service=SERVICE_DN
        )
    )
    port = free_port()
    uri = f"ldap://127.0.0.1:{port}"
    # -d 0: stay in the foreground (a child we can stop) and log nothing
    server = subprocess.Popen(
        [SLAPD, "-d", "0", "-h", f"{uri}/", "-f", str(conf)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, server)
        subprocess.run(
            [LDAPADD, "-x", "-H", uri, "-D", ADMIN_DN, "-w", ADMIN_PW],
            input=LDIF.encode(),
            check=True,
            capture_output=True,
        )
        yield Directory(uri)
    finally:
        stop(server)


def _configure(settings: Any, uri: str, *, require_role: bool = False) -> None:
    """PerfHub's settings as perfhub/settings.py builds them from the PERFHUB_LDAP_* variables."""
    from perfhub.ldap_settings import ldap_settings
    from perfhub.signin_roles import parse_role_map

    role_map = parse_role_map("map", f"{EDITORS}=editor;{READERS}=viewer", separators=";")
    settings.AUTH_LDAP_SERVER_URI = uri
    settings.PERFHUB_LDAP_ROLE_MAP = role_map
    settings.AUTH_LDAP_REQUIRE_GROUP = None  # unless this call asks for it again
    for name, value in ldap_settings(
        bind_dn=SERVICE_DN,
        bind_password=SERVICE_PW,
        user_base=f"ou=people,{BASE}",
        user_filter="(uid=%(user)s)",
        group_base=f"ou=groups,{BASE}",
        group_type="groupofnames",
        start_tls=False,
        role_map=role_map,
        require_role=require_role,
    ).items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "perfhub.auth_ldap.PerfHubLDAPBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]


def _sign_in(client: Any, name: str, password: str) -> Any:
    return client.post("/login/", {"username": name, "password": password})


def _roles(name: str) -> set[str]:
    from django.contrib.auth.models import User

    return set(User.objects.get(username=name).groups.values_list("name", flat=True))


def test_a_directory_user_signs_in_through_the_form_with_roles_from_groups(
    client, settings, directory
) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    _configure(settings, directory.uri)
    page = _sign_in(client, "dana", "pw-dana")
    assert page.status_code == 302 and page["Location"] == "/"
    dana = User.objects.get(username="dana")
    assert (dana.email, dana.first_name, dana.last_name) == ("dana@example.org", "Dana", "Example")
    assert not dana.has_usable_password()  # the directory holds it
    assert _roles("dana") == {"editor", "viewer"}
    assert client.get("/").status_code == 200


def test_a_wrong_password_is_refused(client, settings, directory) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import User

    _configure(settings, directory.uri)
    page = _sign_in(client, "erin", "pw-dana")
    assert page.status_code == 200 and "didn" in page.content.decode()
    assert not User.objects.filter(username="erin").exists()
    assert _sign_in(client, "nobody", "pw-nobody").status_code == 200


def test_roles_follow_the_directory_at_every_sign_in(client, settings, directory) -> None:  # type: ignore[no-untyped-def]
    _configure(settings, directory.uri)
    assert _sign_in(client, "erin", "pw-erin").status_code == 302
    assert _roles("erin") == {"viewer"}
    client.logout()
    directory.membership("add", EDITORS, "erin")  # promoted at the company
    directory.membership("delete", READERS, "erin")
    try:
        assert _sign_in(client, "erin", "pw-erin").status_code == 302
        assert _roles("erin") == {"editor"}  # added and removed
    finally:
        directory.membership("delete", EDITORS, "erin")
        directory.membership("add", READERS, "erin")


def test_a_person_in_no_mapped_group_is_refused_when_a_role_is_required(
    client, settings, directory
) -> None:  # type: ignore[no-untyped-def]
    _configure(settings, directory.uri, require_role=True)
    assert _sign_in(client, "frank", "pw-frank").status_code == 200
    assert _sign_in(client, "erin", "pw-erin").status_code == 302
    _configure(settings, directory.uri, require_role=False)
    client.logout()
    assert _sign_in(client, "frank", "pw-frank").status_code == 302  # then he reads only
    assert _roles("frank") == set()


def test_local_accounts_sign_in_beside_the_directory_and_without_it(
    client, settings, directory, editor
) -> None:  # type: ignore[no-untyped-def]
    _configure(settings, directory.uri)
    assert _sign_in(client, editor.username, f"pw-{editor.username}").status_code == 302
    client.logout()
    _configure(settings, f"ldap://127.0.0.1:{free_port()}")  # nothing listens there
    assert _sign_in(client, editor.username, f"pw-{editor.username}").status_code == 302


def test_failed_directory_sign_ins_are_throttled_like_local_ones(
    client, settings, directory
) -> None:  # type: ignore[no-untyped-def]
    _configure(settings, directory.uri)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _sign_in(client, "dana", "guess").status_code == 200
    assert _sign_in(client, "dana", "guess").status_code == 429  # the limit reached
    # locked out before the directory is asked, even with the right password
    assert _sign_in(client, "dana", "pw-dana").status_code == 429
