"""Hugging Face transformers' output capture: a model whose forward is decorated `@capture_outputs`
returns `hidden_states` and `attentions` that forward hooks collected from its layers (those its
class's `_can_record_outputs` names), when `output_hidden_states=True` or `output_attentions=True`
asks for them. They are the layers' own tensors: the input of the first layer, each layer's output
(the last replaced by `last_hidden_state`), each attention's weights (a softmax's saved output)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import libcst as cst

from gradguard.analysis.names import decorator_heads
from gradguard.analysis.shared import Part
from gradguard.analysis.values import UNKNOWN, ConstValue, Definitions, FunctionRef, ModuleValue, SequenceValue, Value, truth

_DECORATORS = frozenset({"capture_outputs", "check_model_inputs"})
_REQUESTS = {"hidden_states": "output_hidden_states", "attentions": "output_attentions",
             "cross_attentions": "output_attentions"}


@dataclass
class Capture:
    """What one decorated forward collects: each requested key's (layer class, index in its output)."""

    targets: dict[str, tuple[str, int]]
    layers: int | None  # the model's `config.num_hidden_layers`: a collection of another length is not known
    tie_last: bool = True  # the last hidden state is `last_hidden_state` (not for ViT, CLIP: `tie_last_hidden_states`)
    collected: dict[str, list[Value]] = field(default_factory=dict)


class OutputCapture(Part):
    """The interpreter's part that collects what a `@capture_outputs` forward returns beside its output."""

    @contextmanager
    def capturing(self, module: ModuleValue, kwargs: dict[str, Value]) -> Iterator[Capture | None]:
        """Around `module`'s forward: a capture when that forward collects outputs that `kwargs`
        (or the module's config) ask for."""
        capture = self._capture_of(module, kwargs)
        if capture is None:
            yield None
            return
        self.run.captures.append(capture)
        try:
            yield capture
        finally:
            self.run.captures.pop()

    def record(self, module: ModuleValue, args: list[Value], output: Value) -> None:
        """`module` (of a layer class the innermost capture names) ran on `args`, giving `output`."""
        if not self.run.captures or module.user_class is None or module.definitions is None:
            return
        capture = self.run.captures[-1]
        lineage = {name for _, name in module.definitions.mro(module.user_class)}
        for key, (target, index) in capture.targets.items():
            if target not in lineage:
                continue
            collected = capture.collected.setdefault(key, [])
            if key == "hidden_states" and not collected and args:
                collected.append(args[0])  # the first layer's input: the embeddings
            collected.append(output.item(index) if isinstance(output, SequenceValue) else output)

    @staticmethod
    def returned(capture: Capture, output: Value) -> Value:
        """The forward's `output` with what `capture` collected as its `hidden_states`, `attentions`..."""
        if not isinstance(output, ModuleValue) or output.is_module:
            return output
        children = dict(output.named_children)
        for key in capture.targets:
            values = capture.collected.get(key, [])
            expected = capture.layers + (key == "hidden_states") if capture.layers is not None else None
            if len(values) != expected:  # layers run in a loop not unrolled, or not counted: which is which is not known
                children[key] = UNKNOWN
                continue
            if key == "hidden_states" and capture.tie_last and "last_hidden_state" in children:
                values = [*values[:-1], children["last_hidden_state"]]
            children[key] = SequenceValue(tuple(values))
        return replace(output, named_children=children)

    def _capture_of(self, module: ModuleValue, kwargs: dict[str, Value]) -> Capture | None:
        """The capture of a call of `module` with `kwargs`: None (most calls, decided first from the
        request flags alone) unless its class's forward collects outputs the call or the config asks for."""
        if module.user_class is None or module.definitions is None or not module.definitions.mentions("_can_record"):
            return None
        given = module.named_children.get("config")
        config = given if isinstance(given, ModuleValue) else None
        requested = {flag for flag in set(_REQUESTS.values())
                     if isinstance(asked := kwargs.get(flag, config.named_children.get(flag) if config else None),
                                   ConstValue) and truth(asked)}
        found = module.definitions.method(module.user_class, "forward") if requested else None
        if found is None or _DECORATORS.isdisjoint(name.rsplit(".", 1)[-1] for name, _ in decorator_heads(found[0])
                                                  if name is not None):
            return None
        targets = {key: spec for key, spec in _recorded(module.definitions, module.user_class).items()
                   if _REQUESTS.get(key, f"output_{key}") in requested}
        if not targets:
            return None
        layers = self.parts.module_objects.module_attribute(config, "num_hidden_layers", found[0]) \
            if config is not None else None  # (`n_layer` of a config whose `attribute_map` says so)
        tie = next((a.value for d in found[0].decorators if isinstance(d.decorator, cst.Call)
                    for a in d.decorator.args if a.keyword is not None and a.keyword.value == "tie_last_hidden_states"), None)
        configured = config.named_children.get("tie_last_hidden_states") if config is not None else None
        untied = (isinstance(configured, ConstValue) and configured.value is False) or \
            (not isinstance(configured, ConstValue) and isinstance(tie, cst.Name) and tie.value == "False")
        return Capture(targets, layers.value if isinstance(layers, ConstValue) and type(layers.value) is int else None,
                       tie_last=not untied)

def _recorded(definitions: Definitions, class_name: str) -> dict[str, tuple[str, int]]:
    """The layers `_can_record_outputs` names in the class body (of `class_name` or a base), read
    from its code: `{"hidden_states": LlamaDecoderLayer, "attentions": OutputRecorder(A, index=1)}`."""
    for defs, name in definitions.mro(class_name):
        for line in defs.classes[name][0].body.body:
            statement = line.body[0] if isinstance(line, cst.SimpleStatementLine) and line.body else None
            if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Dict) and any(
                    isinstance(t.target, cst.Name) and t.target.value == "_can_record_outputs" for t in statement.targets):
                return dict(_entries(statement.value, defs))
    return {}


def _entries(table: cst.Dict, definitions: Definitions) -> Iterator[tuple[str, tuple[str, int]]]:
    for element in table.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            continue
        key, spec, index = element.key.evaluated_value, element.value, None
        if isinstance(spec, cst.Call) and spec.args:  # `OutputRecorder(GPT2Attention, index=1, layer_name=...)`
            index = next((int(a.value.value) for a in spec.args if a.keyword is not None and a.keyword.value == "index"
                          and isinstance(a.value, cst.Integer)), None)
            spec = spec.args[0].value
        target = definitions.globals.get(spec.value) if isinstance(spec, cst.Name) else None
        if isinstance(key, str) and isinstance(target, FunctionRef) and isinstance(target.node, cst.ClassDef):
            yield key, (target.name, index if index is not None else 0 if "hidden_states" in key else 1)
