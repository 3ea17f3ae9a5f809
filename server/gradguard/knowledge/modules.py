"""What each `torch.nn` module saves for backward, and how its `inplace=` form behaves.

Every entry follows `../shared/reference/autograd.md` §3 (torch 2.13, CPU) and is checked by
running torch in `tests/test_knowledge_modules.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Saves(str, Enum):
    """When a module saves one of its tensors for backward (given that a graph is recorded)."""

    ALWAYS = "always"
    NEVER = "never"
    IF_WEIGHT_REQUIRES_GRAD = "if_weight_requires_grad"
    IF_INPUT_REQUIRES_GRAD = "if_input_requires_grad"


class InplaceSaves(str, Enum):
    """What the in-place form (`inplace=True`) saves for its own backward."""

    NO_INPLACE = "no_inplace"
    RESULT = "result"
    CLONE = "clone"
    NOTHING = "nothing"


@dataclass(frozen=True)
class ModuleFacts:
    """One `torch.nn` module class as autograd sees it in train mode."""

    name: str
    op: str
    saves_input: Saves = Saves.NEVER
    saves_output: bool = False
    saves_weight: Saves = Saves.NEVER
    parameters: tuple[str, ...] = ()
    inplace: InplaceSaves = InplaceSaves.NO_INPLACE
    inplace_position: int | None = None
    returns_input: bool = False
    returns_input_in_eval: bool = False
    saves_buffers: tuple[str, ...] = ()  # buffers saved whenever the call is recorded (BatchNorm's running stats)
    output_views_input: bool = False
    output_view_in_eval: bool = False
    saves_state: bool = False  # the recurrent state given (`hx`, the second argument; each tensor of a tuple),
    # saved whenever the call is recorded: it goes through a linear map of trainable weights


def _activation(name: str, op: str, *, saves_output: bool = False, inplace: InplaceSaves = InplaceSaves.NO_INPLACE,
                inplace_position: int | None = None) -> ModuleFacts:
    return ModuleFacts(
        name, op,
        saves_input=Saves.NEVER if saves_output else Saves.ALWAYS,
        saves_output=saves_output,
        inplace=inplace,
        inplace_position=inplace_position,
    )


_CONV = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
_NORM = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")
_DROPOUT = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d")
# These accept `inplace=` but their forward never passes it on: the call is always out of place.
_ALPHA_DROPOUT = ("AlphaDropout", "FeatureAlphaDropout")

_TABLE: tuple[ModuleFacts, ...] = (
    *(ModuleFacts(n, "convolution", saves_input=Saves.ALWAYS, saves_weight=Saves.ALWAYS,
                  parameters=("weight", "bias")) for n in _CONV),
    ModuleFacts("Linear", "addmm", saves_input=Saves.IF_WEIGHT_REQUIRES_GRAD,
                saves_weight=Saves.IF_INPUT_REQUIRES_GRAD, parameters=("weight", "bias")),
    ModuleFacts("Bilinear", "_trilinear", saves_input=Saves.IF_WEIGHT_REQUIRES_GRAD,
                saves_weight=Saves.IF_INPUT_REQUIRES_GRAD, parameters=("weight", "bias")),
    *(ModuleFacts(n, "native_batch_norm", saves_input=Saves.ALWAYS, saves_weight=Saves.ALWAYS,
                  parameters=("weight", "bias"), saves_buffers=("running_mean", "running_var")) for n in _NORM),
    *(ModuleFacts(n, "native_batch_norm", saves_input=Saves.ALWAYS)
      for n in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")),
    ModuleFacts("LayerNorm", "native_layer_norm", saves_input=Saves.ALWAYS, saves_weight=Saves.ALWAYS,
                parameters=("weight", "bias")),
    ModuleFacts("GroupNorm", "native_group_norm", saves_input=Saves.ALWAYS, saves_weight=Saves.ALWAYS,
                parameters=("weight", "bias")),
    # On CPU `_fused_rms_norm` is CompositeImplicitAutograd: it decomposes (pow, mean, rsqrt, mul), and the
    # final `mul` by the weight saves the weight only when the normalized input requires grad.
    ModuleFacts("RMSNorm", "_fused_rms_norm", saves_input=Saves.ALWAYS, saves_weight=Saves.IF_INPUT_REQUIRES_GRAD,
                parameters=("weight",)),
    _activation("ReLU", "relu", saves_output=True, inplace=InplaceSaves.RESULT, inplace_position=0),
    _activation("LeakyReLU", "leaky_relu", inplace=InplaceSaves.RESULT, inplace_position=1),
    _activation("ELU", "elu", inplace=InplaceSaves.RESULT, inplace_position=1),
    _activation("SELU", "elu", inplace=InplaceSaves.RESULT, inplace_position=0),
    _activation("CELU", "celu", inplace=InplaceSaves.RESULT, inplace_position=1),
    _activation("RReLU", "rrelu_with_noise", inplace=InplaceSaves.RESULT, inplace_position=2),
    _activation("ReLU6", "hardtanh", inplace=InplaceSaves.CLONE, inplace_position=0),
    _activation("Hardtanh", "hardtanh", inplace=InplaceSaves.CLONE, inplace_position=2),
    _activation("SiLU", "silu", inplace=InplaceSaves.CLONE, inplace_position=0),
    _activation("Mish", "mish", inplace=InplaceSaves.CLONE, inplace_position=0),
    _activation("Hardswish", "hardswish", inplace=InplaceSaves.CLONE, inplace_position=0),
    _activation("Hardsigmoid", "hardsigmoid", inplace=InplaceSaves.CLONE, inplace_position=0),
    _activation("Threshold", "threshold", inplace=InplaceSaves.CLONE, inplace_position=2),
    *(_activation(n, op) for n, op in (
        ("GELU", "gelu"), ("Softplus", "softplus"), ("Hardshrink", "hardshrink"),
        ("Softshrink", "softshrink"), ("GLU", "glu"), ("LogSigmoid", "log_sigmoid_forward"),
        ("Softsign", "div"))),
    ModuleFacts("PReLU", "_prelu_kernel", saves_input=Saves.ALWAYS, saves_weight=Saves.ALWAYS,
                parameters=("weight",)),
    *(_activation(n, op, saves_output=True) for n, op in (
        ("Sigmoid", "sigmoid"), ("Tanh", "tanh"), ("Softmax", "_softmax"), ("LogSoftmax", "_log_softmax"),
        ("Softmin", "_softmax"))),
    ModuleFacts("Tanhshrink", "tanh"),
    *(ModuleFacts(n, "mul", inplace=InplaceSaves.NOTHING, inplace_position=1, returns_input_in_eval=True)
      for n in _DROPOUT),
    *(ModuleFacts(n, "mul", returns_input_in_eval=True) for n in _ALPHA_DROPOUT),
    *(ModuleFacts(n, op, saves_input=Saves.ALWAYS) for n, op in (
        ("MaxPool1d", "max_pool2d_with_indices"), ("MaxPool2d", "max_pool2d_with_indices"),
        ("MaxPool3d", "max_pool3d_with_indices"), ("AdaptiveMaxPool1d", "adaptive_max_pool2d"),
        ("AdaptiveMaxPool2d", "adaptive_max_pool2d"), ("AdaptiveMaxPool3d", "adaptive_max_pool3d"))),
    *(ModuleFacts(n, op, saves_input=Saves.ALWAYS) for n, op in (
        ("AvgPool1d", "avg_pool2d"), ("AvgPool2d", "avg_pool2d"), ("AvgPool3d", "avg_pool3d"))),
    # The saved input is the index tensor: mutating the indices after the call breaks backward.
    ModuleFacts("Embedding", "embedding", saves_input=Saves.ALWAYS, parameters=("weight",)),
    ModuleFacts("EmbeddingBag", "_embedding_bag", saves_input=Saves.ALWAYS, parameters=("weight",)),
    ModuleFacts("Identity", "alias", returns_input=True),
    ModuleFacts("Flatten", "view", output_views_input=True),
    ModuleFacts("Unflatten", "view", output_views_input=True),
    *(ModuleFacts(n, op) for n, op in (
        ("Upsample", "upsample_nearest2d"), ("UpsamplingNearest2d", "upsample_nearest2d"),
        ("UpsamplingBilinear2d", "upsample_bilinear2d"), ("PixelShuffle", "pixel_shuffle"),
        ("PixelUnshuffle", "pixel_unshuffle"), ("CrossEntropyLoss", "_log_softmax"),
        *((f"{kind}Pad{n}d", "constant_pad_nd") for kind in ("Zero", "Constant") for n in (1, 2, 3)),
        *((f"CircularPad{n}d", "_pad_circular") for n in (1, 2, 3)))),
    # reflection and replication padding save their input; constant and circular padding copy it
    *(ModuleFacts(f"{kind}Pad{n}d", f"{kind.lower()}_pad{n}d", saves_input=Saves.ALWAYS)
      for kind in ("Reflection", "Replication") for n in (1, 2, 3)),
    ModuleFacts("LSTM", "mkldnn_rnn_layer", saves_input=Saves.ALWAYS, saves_output=True, saves_weight=Saves.ALWAYS,
                parameters=("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"), saves_state=True),
    # weight_ih is saved if the input requires grad; weight_hh always (from the second time step on).
    *(ModuleFacts(n, op, saves_input=Saves.IF_WEIGHT_REQUIRES_GRAD, saves_weight=Saves.ALWAYS,
                  parameters=("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"), saves_state=True)
      for n, op in (("GRU", "gru"), ("RNN", "rnn_tanh"))),
    # One time step: the input goes through a linear map (saved when the weights require grad).
    *(ModuleFacts(n, op, saves_input=Saves.IF_WEIGHT_REQUIRES_GRAD, saves_output=n == "RNNCell",
                  saves_weight=Saves.IF_INPUT_REQUIRES_GRAD,
                  parameters=("weight_ih", "weight_hh", "bias_ih", "bias_hh"), saves_state=True)
      for n, op in (("RNNCell", "rnn_tanh_cell"), ("GRUCell", "gru_cell"), ("LSTMCell", "lstm_cell"))),
    # The input projections are linear maps of query, key and value; the output projection's weight is
    # saved whenever the attention it projects requires grad, which the trainable input projections make it.
    ModuleFacts("MultiheadAttention", "linear", saves_input=Saves.IF_WEIGHT_REQUIRES_GRAD, saves_weight=Saves.ALWAYS,
                parameters=("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")),
    ModuleFacts("MSELoss", "mse_loss", saves_input=Saves.ALWAYS),
    # l1_loss is composite: abs(input - target) saves the difference, not the input.
    ModuleFacts("L1Loss", "l1_loss"),
)

MODULES: dict[str, ModuleFacts] = {facts.name: facts for facts in _TABLE}

CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})


#: Functions that reparametrise a module's tensor (`name`, "weight" unless given as their second argument)
#: and return the module: the parameters that replace it. The module's forward then runs with the
#: tensor computed from them (`weight = g * v / ||v||`), which requires grad and is no leaf.
PARAMETRIZATIONS: dict[str, tuple[str, ...]] = {
    "torch.nn.utils.weight_norm": ("{name}_g", "{name}_v"),
    "torch.nn.utils.spectral_norm": ("{name}_orig",),
    "torch.nn.utils.parametrizations.weight_norm": ("parametrizations.{name}.original0",
                                                    "parametrizations.{name}.original1"),
    "torch.nn.utils.parametrizations.spectral_norm": ("parametrizations.{name}.original",),
    "torch.nn.utils.parametrizations.orthogonal": ("parametrizations.{name}.original",),
    "torch.nn.utils.parametrize.register_parametrization": ("parametrizations.{name}.original",),
}

#: The parametrizations whose computation (at each forward) saves the tensors it computes from:
#: `_weight_norm(v, g)` both, spectral norm's division and `mv` the original (`orthogonal` none).
PARAMETRIZATIONS_SAVING = frozenset({"torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                                     "torch.nn.utils.parametrizations.weight_norm",
                                     "torch.nn.utils.parametrizations.spectral_norm"})

#: `torch.nn.utils.prune`'s methods on one tensor: it stays as `{name}_orig` (the same parameter),
#: a buffer `{name}_mask` joins it, and each forward computes the tensor as their product, which
#: saves the mask whenever the original requires grad.
PRUNING_METHODS = frozenset(f"torch.nn.utils.prune.{method}" for method in (
    "identity", "random_unstructured", "l1_unstructured", "random_structured", "ln_structured", "custom_from_mask"))
#: The same for each `(module, name)` of its first argument.
GLOBAL_PRUNING = "torch.nn.utils.prune.global_unstructured"
#: Makes the pruned tensor a parameter again: the original, holding the product.
PRUNING_REMOVAL = "torch.nn.utils.prune.remove"

#: Whole recurrent networks: their parameters depend on the layers, the directions and `proj_size`.
RECURRENT_NETWORKS = frozenset({"RNN", "LSTM", "GRU"})


def recurrent_parameters(*, num_layers: int = 1, bidirectional: bool = False, bias: bool = True,
                         proj_size: int = 0) -> tuple[str, ...]:
    """The parameters of an `nn.RNN`/`LSTM`/`GRU` as torch names them, layer by layer and direction
    by direction: `weight_ih_l1`, `bias_hh_l0_reverse`, an LSTM's projection `weight_hr_l0`."""
    names: list[str] = []
    for layer in range(num_layers):
        for suffix in ("", "_reverse") if bidirectional else ("",):
            names += [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
            names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"] if bias else []
            names += [f"weight_hr_l{layer}{suffix}"] if proj_size > 0 else []
    return tuple(names)


def module(name: str) -> ModuleFacts | None:
    """The facts of the `torch.nn` module class called `name`, if gradguard knows it."""
    return MODULES.get(name)
