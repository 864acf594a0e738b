"""TVM's registered executors and runtimes and the options each takes (their names and
TVM's type names), checked when one is made, as TVM's attribute registry checks them."""

from __future__ import annotations

from ....errors import Error

_BOOL, _STR, _INT = "runtime.BoxBool", "runtime.String", "runtime.BoxInt"

EXECUTORS = {
    "graph": {"link-params": (_BOOL, False)},
    "aot": {"link-params": (_BOOL, False), "unpacked-api": (_BOOL, False),
            "interface-api": (_STR, "packed"), "workspace-byte-alignment": (_INT, 16),
            "constant-byte-alignment": (_INT, 16)},
}
RUNTIMES = {
    "cpp": {"system-lib": (_BOOL, False)},
    "crt": {"system-lib": (_BOOL, False)},
}


def _type_name(value) -> str:
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _INT
    if isinstance(value, str):
        return _STR
    return type(value).__name__


class Described:
    """An executor or runtime: its ``name`` and the options it was given over the
    defaults (``x["link-params"]``, ``"link-params" in x``)."""

    KIND = ""
    TABLE: dict = {}

    def __init__(self, name: str, options: dict | None = None):
        known = self.TABLE.get(name)
        if known is None:
            raise Error(f'{self.KIND} "{name}" is not defined')
        for key, value in (options or {}).items():
            if key not in known:
                raise Error(f'Attribute "{key}" is not available on this {self.KIND}')
            if _type_name(value) != known[key][0]:
                raise Error(f'Attribute "{key}" should have type "{known[key][0]}" but '
                            f'instead found "{_type_name(value)}"')
        self.name = name
        given = options or {}
        self.attrs = {k: given.get(k, v[1]) for k, v in known.items()}

    def __getitem__(self, key: str):
        return self.attrs[key]

    def __contains__(self, key: str) -> bool:
        return key in self.attrs

    def __repr__(self) -> str:
        return self.name

    @classmethod
    def list_registered(cls) -> list[str]:
        return list(cls.TABLE)

    @classmethod
    def list_registered_options(cls, name) -> dict[str, str]:
        name = getattr(name, "name", name)
        if name not in cls.TABLE:
            raise Error(f'{cls.KIND} "{name}" is not defined')
        return {k: v[0] for k, v in cls.TABLE[name].items()}
