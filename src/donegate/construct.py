"""Wire models made from values donegate has already validated or computed itself.

pydantic's ``model_construct`` walks every field of the model on each call; for the verdict of a
claim and the claims the typed reader took, that walk costs more than the work that made the
values. No pydantic import here: the batch reader loads this module without the models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from donegate.wire import WireModel

M = TypeVar("M", bound="WireModel")

_set = object.__setattr__  # the models' own __setattr__ refuses: they are frozen


def built(
    cls: type[M], fields_set: set[str], values: dict[str, Any], extra: dict[str, Any] | None = None
) -> M:
    """A model of values the verifier computed itself, as ``model_construct`` makes it, for the
    wire models (no aliases, defaults, private attributes or post-init hooks): pydantic's own walk
    over the fields costs more than the rules that computed them. Every field is in ``values``,
    ``fields_set`` says which were given, and the set is shared: frozen models never change it.
    ``extra`` holds the fields the format does not name, kept as given (none by default).
    """
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", {} if extra is None else extra)
    _set(model, "__pydantic_private__", None)
    return model
