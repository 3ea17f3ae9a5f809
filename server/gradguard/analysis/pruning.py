"""`torch.nn.utils.prune` on a module the analysis knows: the original and the mask it keeps, and
what each forward saves of them (`ModuleValue.saves_originals`)."""

from __future__ import annotations

import libcst as cst

from gradguard.analysis.values import ModuleValue, Origin, TensorValue, Tri, new_version_counter


def prune(module: ModuleValue, tensor: str, node: cst.CSTNode) -> None:
    """`prune.l1_unstructured(module, "weight", ...)` and the like: `weight_orig` is the parameter
    `weight` was, `weight_mask` a new buffer, `weight` their product; again on a pruned tensor, a
    new mask."""
    original = module.parameters.pop(tensor, None)
    if original is not None:
        module.parameters[f"{tensor}_orig"] = original
        module.buffers[tensor] = TensorValue(new_version_counter(), original.requires_grad, False,
                                             Origin(f"the {tensor} `prune` computes", node))
        # (the product is a plain attribute the forward then reads: the module's op saves that very tensor)
        module.saves_originals += (("prune", f"{tensor}_orig", None, "original"),
                                   ("prune", f"{tensor}_mask", f"{tensor}_orig", "mask"),
                                   (module.class_name, tensor, f"{tensor}_orig", tensor))
    elif f"{tensor}_orig" not in module.parameters:
        return
    module.buffers[f"{tensor}_mask"] = TensorValue(new_version_counter(), Tri.NO, True,
                                                   Origin(f"the mask `prune` keeps for the {tensor} of `{module.class_name}`", node))


def remove(module: ModuleValue, tensor: str) -> None:
    """`prune.remove(module, "weight")`: the original, now holding the product, is `weight` again."""
    original = module.parameters.pop(f"{tensor}_orig", None)
    if original is None:
        return
    module.buffers.pop(f"{tensor}_mask", None)
    module.buffers.pop(tensor, None)
    module.parameters[tensor] = original
    module.saves_originals = tuple(s for s in module.saves_originals if s[1] not in (f"{tensor}_orig", f"{tensor}_mask"))
