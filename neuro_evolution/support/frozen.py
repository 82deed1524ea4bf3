"""Classes whose class-level attributes cannot change at runtime, and read-only arrays.

Worker processes started with ``spawn`` or ``forkserver`` re-import every class, so a class
attribute changed at runtime in the parent would silently keep its old value in the workers.
Config, template and brain classes therefore use :class:`FrozenClassMeta`, which refuses such
assignments with a message that points to the experiment config instead.
"""

from __future__ import annotations

import dataclasses
from abc import ABCMeta
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform, overload

import numpy as np

_SEALED = "_frozen_class_sealed_"

T = TypeVar("T")


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class FrozenClassMeta(type):
    """Metaclass that seals a class once it is created: class attributes can no longer be set."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any):
        super().__init__(name, bases, namespace, **kwargs)
        type.__setattr__(cls, _SEALED, True)

    def __setattr__(cls, name: str, value: Any) -> None:
        if cls.__dict__.get(_SEALED, False) and not _is_dunder(name):
            raise AttributeError(
                f"cannot set {cls.__name__}.{name}: class-level attributes are frozen because "
                "worker processes (spawn/forkserver) re-import the class and would never see the "
                "change; put the value in the experiment config instead"
            )
        super().__setattr__(name, value)

    def __delattr__(cls, name: str) -> None:
        if cls.__dict__.get(_SEALED, False) and not _is_dunder(name):
            raise AttributeError(
                f"cannot delete {cls.__name__}.{name}: class attributes are frozen"
            )
        super().__delattr__(name)


class FrozenABCMeta(FrozenClassMeta, ABCMeta):
    """:class:`FrozenClassMeta` for abstract base classes."""


@overload
def frozen_dataclass(cls: type[T], /) -> type[T]: ...


@overload
def frozen_dataclass(cls: None = None, /, **options: Any) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, kw_only_default=True)
def frozen_dataclass(
    cls: type[T] | None = None, /, **options: Any
) -> type[T] | Callable[[type[T]], type[T]]:
    """``dataclass(frozen=True, slots=True, kw_only=True)`` for a class with a frozen metaclass.

    The class is unsealed while ``dataclasses`` installs its fields, then sealed again.
    """

    def wrap(klass: type[T]) -> type[T]:
        type.__setattr__(klass, _SEALED, False)
        make = dataclasses.dataclass(frozen=True, slots=True, kw_only=True, **options)
        made: type[T] = make(klass)
        type.__setattr__(made, _SEALED, True)
        return made

    return wrap if cls is None else wrap(cls)


def readonly(array: Any, dtype: Any = None) -> np.ndarray:
    """Return ``array`` as an ndarray whose ``writeable`` flag is off (copies only if needed)."""
    result = np.asarray(array, dtype=dtype)
    if result is array and result.flags.writeable and result.base is not None:
        result = result.copy()
    result.flags.writeable = False
    return result


class ReadOnlyRecord(metaclass=FrozenABCMeta):
    """Base of frozen dataclasses that hold numpy arrays: every array field is made read-only.

    Pickle protocol <= 4 (what ``multiprocessing`` uses on Python 3.11) loses numpy's read-only
    flag, so instances pickle through their constructor and come out read-only again.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # every subclass's

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return (_rebuild_record, (type(self), values))


def _rebuild_record(cls: type, values: dict[str, Any]) -> Any:
    return cls(**values)


class FrozenDict(dict):
    """A dict that refuses changes after creation and pickles (MappingProxyType cannot)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("this mapping is part of a frozen config and cannot be changed")

    # A deliberate break of dict's interface (it stays a dict, so json and numpy take it as
    # one): every mutator is replaced by one that refuses, and the mapping is hashable.
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]  # dict declares __hash__ = None
        return hash(tuple(sorted(self.items(), key=repr)))
