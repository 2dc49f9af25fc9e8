"""Typed, versioned JSON records: frozen classes checked field by field on every read.

Why not pydantic: importing it and building the models costs about 110 ms on this machine
kind, more than `list` may take in all (docs/adr/0002-records-without-pydantic.md). The
records are small flat objects, so a checker of the few types they use gives the same
guarantees: every field typed, the version known, a clear error that names the file.
"""

from __future__ import annotations

import enum
import json
import math
import sys
import types

from agent_tty.frozen import ByValue, missing_arguments


class RecordError(ValueError):
    """A record that does not parse or does not match its schema."""


def _no_constant(name: str) -> Any:
    """NaN and Infinity are not JSON: a record holding one is invalid, not a number."""
    raise ValueError(f"{name} is not a JSON number")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# ---------------------------------------------------------------- what a field's annotation says
#
# Records are declared with annotations, as typing spells them (`str | None`, `tuple[str, ...]`,
# `dict[str, Any]`, `Literal[1]`); importing typing (and dataclasses, which imports inspect)
# would cost every command several ms (issue 26). Under `from __future__ import annotations`
# they are strings, read only when a record is first parsed or written: `X | None` and
# `tuple[...]` are the builtins' own forms, and these two stand in for typing's `Any` and
# `Literal` (records.py takes typing's under TYPE_CHECKING, for type checkers).


class _AnyType:
    def __repr__(self) -> str:
        return "typing.Any"


class _LiteralValues:
    __slots__ = ("values",)

    def __init__(self, values: tuple[object, ...]) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"typing.Literal[{', '.join(map(repr, self.values))}]"


class _LiteralType:
    def __getitem__(self, values: object) -> _LiteralValues:
        return _LiteralValues(values if isinstance(values, tuple) else (values,))


TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Literal, Self
else:
    Any = _AnyType()
    Literal = _LiteralType()


class _Field:
    """One declared field: its name, its annotation's text, and where to read that text."""

    __slots__ = ("name", "annotation", "module", "default", "factory")

    def __init__(self, name: str, annotation: str, module: str, default: object, factory: Callable | None) -> None:  # type: ignore[type-arg]
        self.name, self.annotation, self.module, self.default, self.factory = name, annotation, module, default, factory


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable) -> None:  # type: ignore[type-arg]
        self.make = make


def field(*, default_factory: Callable) -> Any:  # type: ignore[type-arg]
    """A field whose default is made anew for each record (`field(default_factory=dict)`)."""
    return _Factory(default_factory)


class Record(ByValue):
    """Base of every record: frozen, compared by value, whose JSON keys are the camelCase field names.

    Subclasses declare their fields as annotations, with defaults as class attributes (or
    `field(default_factory=...)`), like a frozen dataclass; a subclass of a record adds fields
    after its base's.

    Subclasses set `VERSION` when they are a file of their own; nested records leave it None.
    Unknown keys are ignored so that a newer writer of the same version can add optional
    fields; an unknown version is an error.
    """

    VERSION: ClassVar[int | None] = None
    _fields: ClassVar[tuple[_Field, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = {f.name: f for f in cls._fields}
        # Python 3.14 makes a class's annotations on first access instead of in its namespace.
        annotations = cls.__dict__.get("__annotations__") or (cls.__annotations__ if sys.version_info >= (3, 14) else {})  # noqa: RUF063 - this class's own, not its bases'; inspect costs start-up
        for name, annotation in annotations.items():
            if annotation.startswith(("ClassVar", "typing.ClassVar")):
                continue
            default, factory = cls.__dict__.get(name, MISSING), None
            if isinstance(default, _Factory):
                default, factory = MISSING, default.make
                delattr(cls, name)
            # A field a subclass declares again keeps its base's place, as in a dataclass.
            fields[name] = _Field(name, annotation, cls.__module__, default, factory)
        cls._fields = tuple(fields.values())
        cls._names = frozenset(fields)  # type: ignore[attr-defined]
        cls._fields_cache = None  # type: ignore[attr-defined]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = type(self)._fields
        if len(args) > len(fields):
            required = sum(1 for f in fields if f.default is MISSING and f.factory is None)
            takes = f"{len(fields) + 1}" if required == len(fields) else f"from {required + 1} to {len(fields) + 1}"
            raise TypeError(
                f"{type(self).__qualname__}.__init__() takes {takes} positional arguments but {len(args) + 1} were given"
            )
        names = type(self)._names  # type: ignore[attr-defined]
        values = {f.name: value for f, value in zip(fields, args)} if args else kwargs
        if args or not names.issuperset(kwargs):
            # Each keyword in the order given, as Python's own call checks them.
            for name, value in kwargs.items():
                if name not in names:
                    raise TypeError(f"{type(self).__qualname__}.__init__() got an unexpected keyword argument {name!r}")
                if args:
                    if name in values:
                        raise TypeError(f"{type(self).__qualname__}.__init__() got multiple values for argument {name!r}")
                    values[name] = value
        own = self.__dict__
        missing = []
        for f in fields:
            if f.name in values:
                own[f.name] = values[f.name]
            elif f.factory is not None:
                own[f.name] = f.factory()
            elif f.default is not MISSING:
                own[f.name] = f.default
            else:
                missing.append(f.name)
        if missing:
            missing_arguments(type(self), missing)

    def _values(self) -> tuple[Any, ...]:
        own = self.__dict__
        return tuple(own[f.name] for f in self._fields)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The fields' names in their order (what `dataclasses.fields` listed)."""
        return tuple(f.name for f in cls._fields)

    @classmethod
    def _schema(cls) -> tuple[tuple[str, str, Any, bool], ...]:
        cached = cls.__dict__.get("_fields_cache")
        if cached is None:
            cached = tuple(
                (f.name, _camel(f.name), _hint(f), f.default is MISSING and f.factory is None) for f in cls._fields
            )
            cls._fields_cache = cached  # type: ignore[attr-defined]
        return cached

    @classmethod
    def from_obj(cls, obj: Any, where: str = "") -> Self:
        try:
            return cls._read_valid(obj)
        except RecordError:
            pass
        return cls._read_checked(obj, where)  # the same checks, step by step, to say what is wrong

    @classmethod
    def _read_valid(cls, obj: Any) -> Self:
        """A valid record, read by checkers made once per field: every read of a manifest
        (list reads one per session) skips the generic checker's walk and its messages.
        Raises _Invalid, without a message, at the first thing _read_checked would refuse."""
        if type(obj) is not dict:
            raise _Invalid
        if cls.VERSION is not None and obj.get("version") != cls.VERSION:
            raise _Invalid
        readers = cls.__dict__.get("_readers")
        if readers is None:
            readers = tuple(
                (f.name, _camel(f.name), _checker(_hint(f)), f.default, f.factory) for f in cls._fields
            )
            cls._readers = readers  # type: ignore[attr-defined]
        record = object.__new__(cls)
        own = record.__dict__
        for name, key, check, default, factory in readers:
            if key in obj:
                own[name] = check(obj[key])
            elif factory is not None:
                own[name] = factory()
            elif default is not MISSING:
                own[name] = default
            else:
                raise _Invalid
        return record

    @classmethod
    def _read_checked(cls, obj: Any, where: str = "") -> Self:
        where = where or cls.__name__
        if not isinstance(obj, dict):
            raise RecordError(f"{where}: expected an object, got {_kind(obj)}")
        if cls.VERSION is not None:
            version = obj.get("version")
            if version != cls.VERSION:
                raise RecordError(
                    f"{where}: unsupported version {version!r} (this agent-tty reads version {cls.VERSION})"
                )
        values: dict[str, Any] = {}
        for name, key, hint, required in cls._schema():
            if key not in obj:
                if required:
                    raise RecordError(f"{where}: missing field {key!r}")
                continue
            values[name] = _check(obj[key], hint, f"{where}.{key}")
        return cls(**values)

    @classmethod
    def from_json(cls, text: str | bytes, where: str = "") -> Self:
        try:
            obj = json.loads(text, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as err:
            raise RecordError(f"{where or cls.__name__}: not valid JSON ({err})") from None
        return cls.from_obj(obj, where)

    def to_obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key, _hint, _required in self._schema():
            out[key] = _dump(getattr(self, name))
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_obj(), separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (dataclasses.replace: every field passes through __init__)."""
        return type(self)(**{**{f.name: self.__dict__[f.name] for f in self._fields}, **changes})


def _hint(f: _Field) -> Any:
    """A field's annotation as the checker reads it, evaluated where it was declared."""
    scope = {**vars(sys.modules[f.module]), "Any": Any, "Literal": Literal}  # ours even where a module took typing's
    return eval(f.annotation, scope)  # noqa: S307 (our own source's annotation, as typing.get_type_hints does)


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_obj()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


_SHAPES: dict[Any, tuple[str, Any]] = {}


def _shape(hint: Any) -> tuple[str, Any]:
    """What a hint is, and what the check needs of it, worked out once per hint: a long-lived
    client reads a manifest on every call (once about half of a Python API call's own time)."""
    try:
        return _SHAPES[hint]
    except KeyError:
        pass
    origin, args = getattr(hint, "__origin__", None), getattr(hint, "__args__", ())
    if isinstance(hint, types.UnionType):
        shape: tuple[str, Any] = ("union", args)
    elif isinstance(hint, _LiteralValues):
        shape = ("literal", (hint.values, {type(a) for a in hint.values}))
    elif origin in (list, tuple):
        shape = ("list", args[:1])
    elif origin is dict:
        shape = ("dict", args)
    elif hint is type(None):
        shape = ("null", None)
    elif hint is Any:
        shape = ("any", None)
    elif isinstance(hint, type):
        if issubclass(hint, Record):
            shape = ("record", None)
        elif issubclass(hint, enum.Enum):
            shape = ("enum", None)
        else:
            shape = ({bool: "bool", int: "int", float: "float"}.get(hint, "type"), None)
    else:
        shape = ("unsupported", None)
    _SHAPES[hint] = shape
    return shape


def _check(value: Any, hint: Any, where: str) -> Any:
    kind, args = _shape(hint)
    if kind == "union":
        if value is None and type(None) in args:
            return None
        for option in args:
            try:
                return _check(value, option, where)
            except RecordError:
                pass
        raise RecordError(f"{where}: {_kind(value)} matches none of {hint}")
    if kind == "literal":
        values, kinds = args
        if value in values and type(value) in kinds:
            return value
        raise RecordError(f"{where}: {value!r} is not one of {list(values)}")
    if kind == "list":
        if not isinstance(value, list):
            raise RecordError(f"{where}: expected a list, got {_kind(value)}")
        (item,) = args
        return tuple(_check(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if kind == "dict":
        if not isinstance(value, dict):
            raise RecordError(f"{where}: expected an object, got {_kind(value)}")
        _key, item = args
        return {str(k): _check(v, item, f"{where}.{k}") for k, v in value.items()}
    if kind == "null":
        if value is None:
            return None
        raise RecordError(f"{where}: expected null, got {_kind(value)}")
    if kind == "any":
        return value
    if kind == "record":
        return hint.from_obj(value, where)
    if kind == "enum":
        try:
            return hint(value)
        except ValueError:
            raise RecordError(f"{where}: {value!r} is not a known {hint.__name__}") from None
    if kind == "bool":
        if isinstance(value, bool):
            return value
    elif kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind == "float":
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    elif kind == "type":
        if isinstance(value, hint):
            return value
    else:
        raise TypeError(f"unsupported record type {hint!r} at {where}")
    raise RecordError(f"{where}: expected {hint.__name__}, got {_kind(value)}")


class _Invalid(RecordError):
    """What a field's checker raises: the read is redone by _check, which says why."""


def _checker(hint: Any) -> Any:
    """A function that returns what _check returns for a valid value of `hint`, and raises
    _Invalid (or a nested record's RecordError) where _check would raise."""
    kind, args = _shape(hint)
    if kind == "union":
        options = tuple(_checker(option) for option in args)
        nullable = type(None) in args

        def check_union(value: Any) -> Any:
            if value is None and nullable:
                return None
            for option in options:
                try:
                    return option(value)
                except RecordError:
                    pass
            raise _Invalid

        return check_union
    if kind == "literal":
        values, kinds = args

        def check_literal(value: Any) -> Any:
            if value in values and type(value) in kinds:
                return value
            raise _Invalid

        return check_literal
    if kind == "list":
        item = _checker(args[0])

        def check_list(value: Any) -> Any:
            if not isinstance(value, list):
                raise _Invalid
            return tuple(item(v) for v in value)

        return check_list
    if kind == "dict":
        entry = _checker(args[1])

        def check_dict(value: Any) -> Any:
            if not isinstance(value, dict):
                raise _Invalid
            return {str(k): entry(v) for k, v in value.items()}

        return check_dict
    if kind == "null":

        def check_null(value: Any) -> Any:
            if value is None:
                return None
            raise _Invalid

        return check_null
    if kind == "any":
        return lambda value: value
    if kind == "record":
        return hint._read_valid
    if kind == "enum":

        def check_enum(value: Any) -> Any:
            try:
                return hint(value)
            except ValueError:
                raise _Invalid from None

        return check_enum
    if kind == "bool":

        def check_bool(value: Any) -> Any:
            if isinstance(value, bool):
                return value
            raise _Invalid

        return check_bool
    if kind == "int":

        def check_int(value: Any) -> Any:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            raise _Invalid

        return check_int
    if kind == "float":

        def check_float(value: Any) -> Any:
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                return float(value)
            raise _Invalid

        return check_float
    if kind == "type":

        def check_type(value: Any) -> Any:
            if isinstance(value, hint):
                return value
            raise _Invalid

        return check_type

    def unsupported(value: Any) -> Any:
        raise _Invalid  # _check raises the TypeError that names it

    return unsupported
