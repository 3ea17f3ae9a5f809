"""Hugging Face transformers' models, where their generic code (their `PreTrainedModel` base, read
lazily or not at all) would cost much or give little: the outputs' fields by index, the input
embeddings a model's attributes name, the loss of `self.loss_function`, the weights `post_init` ties."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.names import annotated_fields, qualname_of
from gradguard.analysis.shared import Part
from gradguard.analysis.state import State
from gradguard.analysis.tensor_ops import TensorOps
from gradguard.analysis.values import (
    UNKNOWN,
    ConstValue,
    Definitions,
    DictValue,
    ImportRef,
    ModuleValue,
    Origin,
    TensorValue,
    Value,
)

_GENERIC = "transformers/modeling_utils.py"  # the file of the methods every transformers model inherits
_SUMMARISED = frozenset({"get_input_embeddings", "loss_function"})


class PretrainedModels(Part):
    """The interpreter's part that knows transformers' generic model code by its effect."""

    @staticmethod
    def model_output_item(instance: ModuleValue, index: Value) -> Value | None:
        """`outputs[0]`, `outputs["logits"]` of a transformers `ModelOutput` (whose `__getitem__`
        gives its fields that are not None, in order, as a tuple, or one by name), or None when it
        is not one or which field it is is not known (a field before the index that may be None)."""
        if not derives_from(instance, "ModelOutput"):
            return None
        if isinstance(index, ConstValue) and isinstance(index.value, str):
            value = instance.named_children.get(index.value)
            return value if value is not None else instance.definitions.class_attribute(instance.user_class, index.value)
        if not (isinstance(index, ConstValue) and isinstance(index.value, int) and not isinstance(index.value, bool)
                and index.value >= 0):
            return None
        classes = [(d, name) for d, name in instance.definitions.mro(instance.user_class) if name != "ModelOutput"]
        fields = [f for d, name in reversed(classes) for f in annotated_fields(d.classes[name][0])]  # type: ignore[arg-type]
        position = index.value
        for field_name in dict.fromkeys(fields):
            value = instance.named_children.get(field_name)
            if value is None:
                value = instance.definitions.class_attribute(instance.user_class, field_name)
            if isinstance(value, ConstValue) and value.value is None:
                continue  # `to_tuple()` leaves out the fields that are None
            if value is None or value is UNKNOWN:
                return None  # a field that may be None: which one is at the index is not known
            # (a tensor met on another path by a value the analysis lost counts as given: a model's
            # outputs are tensors on every path it knows)
            if position == 0:
                return value
            position -= 1
        return None

    def method(self, model: ModuleValue, method: str, found: tuple[cst.FunctionDef, Definitions] | None,
                          args: list[Value], node: cst.Call, state: State) -> Value | None:
        """What a transformers model's generic method gives, summarised (None: not one of them):
        `get_input_embeddings()` (a search by attribute names) and `loss_function(logits, labels, ...)`
        (a cross-entropy of the logits: a new tensor in their graph), where the model's class does not
        define its own."""
        if method not in _SUMMARISED or not (found is None or str(found[1].path).endswith(_GENERIC)) \
                or not derives_from(model, "PreTrainedModel"):
            return None
        if method == "get_input_embeddings":
            return self.input_embeddings(model, node, state)
        logits = args[0] if args else None
        if not isinstance(logits, TensorValue):
            return None
        loss = TensorOps.fresh_result(logits.requires_grad, Origin("the loss of `self.loss_function`", node))
        return self.parts.tensor_ops.with_history(loss, args, self.run.next_serial, state)

    def input_embeddings(self, model: ModuleValue, node: cst.Call, state: State) -> Value:
        """transformers' `get_input_embeddings()` where the model's class does not define it: the layer
        `_input_embed_layer` names (`embed_tokens`) on the model, its `embeddings` or `model`, else
        that of its language model or base model (`base_model_prefix`)."""
        assert model.definitions is not None and model.user_class is not None
        layer = model.definitions.class_attribute(model.user_class, "_input_embed_layer")
        name = layer.value if isinstance(layer, ConstValue) and isinstance(layer.value, str) else "embed_tokens"
        for holder in (model, model.named_children.get("embeddings"), model.named_children.get("model")):
            if isinstance(holder, ModuleValue) and isinstance(found := holder.named_children.get(name), ModuleValue):
                return found
        prefix = model.definitions.class_attribute(model.user_class, "base_model_prefix")
        for attribute in ("language_model", prefix.value if isinstance(prefix, ConstValue) else None):
            inner = model.named_children.get(attribute) if isinstance(attribute, str) else None
            if isinstance(inner, ModuleValue) and inner is not model:
                return self.parts.calls.call_method(inner, "get_input_embeddings", [], {}, node, state)
        return UNKNOWN


def derives_from(instance: ModuleValue, transformers_class: str) -> bool:
    """Whether the class of `instance` is, or derives from, the class of transformers named so."""
    return instance.definitions is not None and instance.user_class is not None and any(
        name == transformers_class or any(qualname_of(b).endswith(f".{transformers_class}") for b in d.bases.get(name, ())
                                          if isinstance(b, ImportRef) and qualname_of(b).startswith("transformers."))
        for d, name in instance.definitions.mro(instance.user_class))


def tie_weights(model: ModuleValue) -> None:
    """What transformers' `post_init` ties, when the model's config says to (`tie_word_embeddings`,
    its class's default if not given): each parameter `_tied_weights_keys` names (`lm_head.weight`)
    is the one it maps to (`transformer.wte.weight`), one tensor."""
    config = model.named_children.get("config")
    if not isinstance(config, ModuleValue):
        return
    tie = config.named_children.get("tie_word_embeddings")
    if tie is None and config.definitions is not None and config.user_class is not None:
        tie = config.definitions.class_attribute(config.user_class, "tie_word_embeddings")
    keys = model.definitions.class_attribute(model.user_class, "_tied_weights_keys") \
        if model.definitions is not None and model.user_class is not None else None
    if not (isinstance(tie, ConstValue) and tie.value is True and isinstance(keys, DictValue)):
        return
    for source, target in keys.entries.items():
        owner, name = _module_at(model, str(source))
        tied_owner, tied_name = _module_at(model, target.value) if isinstance(target, ConstValue) and \
            isinstance(target.value, str) else (None, "")
        tied = tied_owner.parameters.get(tied_name) if tied_owner is not None else None
        if owner is not None and tied is not None and name in owner.parameters:
            owner.parameters[name] = tied


def _module_at(model: ModuleValue, path: str) -> tuple[ModuleValue | None, str]:
    """The module holding the parameter at dotted `path` (`transformer.wte.weight`), and its name there."""
    *modules, name = path.split(".")
    owner: Value = model
    for part in modules:
        if not isinstance(owner, ModuleValue):
            return None, name
        owner = owner.named_children.get(part, UNKNOWN) if not part.isdigit() or owner.children is None \
            else owner.children[int(part)] if int(part) < len(owner.children) else UNKNOWN
    return (owner, name) if isinstance(owner, ModuleValue) else (None, name)


