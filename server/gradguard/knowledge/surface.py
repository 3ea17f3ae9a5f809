"""The Python surface of PyTorch mapped onto ATen ops: functions, methods, operators, modules.

Names here are what users type; the op table (`ops.py`) says what each ATen op saves. Every
mapping follows the profiler traces in `../shared/reference/autograd.md` §3 and §6.
"""

from __future__ import annotations

from dataclasses import dataclass

#: `a op= b` → the in-place ATen op; `@=` is absent: tensors have no `__imatmul__`, so it rebinds.
AUGMENTED_INPLACE: dict[str, str] = {
    "AddAssign": "add_",
    "SubtractAssign": "sub_",
    "MultiplyAssign": "mul_",
    "DivideAssign": "div_",
    "FloorDivideAssign": "floor_divide_",
    "ModuloAssign": "remainder_",
    "PowerAssign": "pow_",
    "BitAndAssign": "bitwise_and_",
    "BitOrAssign": "bitwise_or_",
    "BitXorAssign": "bitwise_xor_",
    "LeftShiftAssign": "__ilshift__",
    "RightShiftAssign": "__irshift__",
}

#: `a op b` → the functional ATen op.
BINARY: dict[str, str] = {
    "Add": "add",
    "Subtract": "sub",
    "Multiply": "mul",
    "Divide": "div",
    "FloorDivide": "floor_divide",
    "Modulo": "remainder",
    "Power": "pow",
    "MatrixMultiply": "matmul",
    "BitAnd": "bitwise_and",
    "BitOr": "bitwise_or",
    "BitXor": "bitwise_xor",
    "LeftShift": "__lshift__",
    "RightShift": "__rshift__",
}

#: Calls that return their input object when it already has the asked-for layout, dtype or
#: device (`contiguous()` on a contiguous tensor, `float()` on a float one...): they share its
#: version counter, but only maybe.
MAYBE_RETURNS_SELF = frozenset({
    "contiguous", "to", "float", "cpu", "cuda", "type", "type_as", "conj", "resolve_conj", "resolve_neg",
    "as_tensor", "asarray",
})

#: Conversions to a dtype other than the default float32: on a default tensor they copy.
DTYPE_COPIES = frozenset({"double", "half", "bfloat16", "int", "long", "bool", "short", "char", "byte"})

#: Calls that always return their input object.
RETURNS_SELF = frozenset({"requires_grad_", "retain_grad"})

#: Views whose result may be a copy (not viewable strides): `reshape`, `flatten`...
MAYBE_VIEW = frozenset({"reshape", "reshape_as", "flatten", "ravel"})

#: Views that reorder dimensions: their result is not contiguous, so `contiguous()` copies it
#: (`q.transpose(1, 2).contiguous()` in attention code is a new tensor, never an alias).
TRANSPOSING_VIEWS = frozenset({"transpose", "t", "permute", "swapaxes", "swapdims", "movedim", "moveaxis", "adjoint",
                               "T", "mT", "H", "mH"})

#: Views not in ATen's schema language as method names.
ATTRIBUTE_VIEWS = frozenset({"T", "mT", "H", "mH", "real", "imag"})

#: The autograd node of a view op's output, as torch names it in its errors (`Output 0 of Permute`), where it is
#: not the op's name in CamelCase; None where it depends on the arguments (`flatten` may return its input).
VIEW_NODES: dict[str, str | None] = {
    "reshape": "ReshapeAlias", "reshape_as": "ReshapeAlias", "view_as": "View", "unflatten": "View",
    "narrow": "Slice", "movedim": "Permute", "moveaxis": "Permute", "T": "Permute", "mT": "Transpose",
    "swapaxes": "Transpose", "swapdims": "Transpose", "expand_as": "Expand", "squeeze.dim": "Squeeze1",
    "squeeze.dims": "Squeeze2", "flatten": None, "ravel": None, "H": None, "mH": None, "real": None, "imag": None,
}


def view_node(op: str) -> str | None:
    """The node torch names for the output of the view op `op`: `permute` → `Permute`, `squeeze.dim` → `Squeeze1`."""
    name = op if op in VIEW_NODES else op.split(".", 1)[0]
    if name in VIEW_NODES:
        return VIEW_NODES[name]
    return "".join(part.capitalize() for part in name.split("_"))


#: Shares storage but gets a new version counter: writes through these are invisible to autograd.
STORAGE_ALIASES = frozenset({"unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"})

#: Tensor factories: a new leaf, requiring grad only with `requires_grad=True`.
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "randn", "rand", "randint", "randperm", "arange", "linspace",
    "logspace", "eye", "tensor", "zeros_like", "ones_like", "empty_like", "full_like", "randn_like",
    "rand_like", "randint_like", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor",
    "BoolTensor", "HalfTensor", "ByteTensor", "empty_strided", "normal", "from_numpy", "clone",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "tril_indices", "triu_indices",
})

#: Methods whose result is not a tensor we follow (Python numbers, shapes, arrays).
NOT_TENSORS = frozenset({
    "size", "shape", "dim", "ndim", "numel", "item", "tolist", "numpy", "stride", "storage",
    "data_ptr", "element_size", "nelement", "is_contiguous", "is_floating_point", "get_device",
    "untyped_storage", "register_hook", "dtype", "device", "any", "all", "equal",
})


@dataclass(frozen=True)
class Decomposition:
    """A composite op that records another op's backward on CPU/CUDA, with argument renaming."""

    aten_op: str
    rename: tuple[tuple[str, str], ...] = ()

    def argument(self, python_name: str) -> str:
        return dict(self.rename).get(python_name, python_name)


#: Composite ops (no own grad_fn on CPU/CUDA) → the op whose saves they record.
DECOMPOSITIONS: dict[str, Decomposition] = {
    "matmul": Decomposition("mm", (("other", "mat2"),)),
    "linear": Decomposition("addmm", (("input", "mat1"), ("weight", "mat2"), ("bias", "self"))),
    "softmax": Decomposition("_softmax", (("input", "self"),)),
    "log_softmax": Decomposition("_log_softmax", (("input", "self"),)),
    "softmin": Decomposition("_softmax", (("input", "self"),)),
    # Python functions of `torch.nn.functional` over ATen ops, each the op that saves what they save
    # (tests/test_knowledge_drift.py runs them): `logsigmoid` is ATen's `log_sigmoid`; `softsign`'s
    # `input / (input.abs() + 1)` and `normalize`'s `input / norm(input)` save their input, not their output
    "logsigmoid": Decomposition("log_sigmoid", (("input", "self"),)),
    "softsign": Decomposition("abs", (("input", "self"),)),
    "normalize": Decomposition("abs", (("input", "self"),)),
    "max_pool1d": Decomposition("max_pool2d_with_indices", (("input", "self"),)),
    "max_pool2d": Decomposition("max_pool2d_with_indices", (("input", "self"),)),
    "conv1d": Decomposition("convolution"),
    "conv2d": Decomposition("convolution"),
    "conv3d": Decomposition("convolution"),
    "conv_transpose1d": Decomposition("convolution"),
    "conv_transpose2d": Decomposition("convolution"),
    "conv_transpose3d": Decomposition("convolution"),
    "batch_norm": Decomposition("native_batch_norm"),
    "layer_norm": Decomposition("native_layer_norm"),
    "group_norm": Decomposition("native_group_norm"),
    "relu6": Decomposition("hardtanh", (("input", "self"),)),
    "selu": Decomposition("elu", (("input", "self"),)),
    "chunk": Decomposition("split"),
    "square": Decomposition("pow.Tensor_Scalar"),
    "mse_loss": Decomposition("mse_loss", (("input", "self"),)),
}

#: Composites whose kernel, and so what they save, a string argument chooses: that argument, its
#: default, and the op each of its values runs. `F.pad`: constant and circular padding copy the
#: input and save nothing; reflect and replicate padding save it (measured on torch 2.13:
#: tests/programs/*pad*).
CHOSEN_KERNELS: dict[str, tuple[str, str, dict[str, str]]] = {
    "pad": ("mode", "constant", {"constant": "constant_pad_nd", "circular": "_pad_circular",
                                 "reflect": "reflection_pad1d", "replicate": "replication_pad1d"}),
}

#: `F.*` functions with `inplace=`: position of the `inplace` argument and the in-place op.
FUNCTIONAL_INPLACE: dict[str, tuple[int, str]] = {
    "relu": (1, "relu_"),
    "relu6": (1, "hardtanh_"),
    "leaky_relu": (2, "leaky_relu_"),
    "elu": (2, "elu_"),
    "selu": (1, "elu_"),
    "celu": (2, "celu_"),
    "silu": (1, "silu_"),
    "mish": (1, "mish_"),
    "hardtanh": (3, "hardtanh_"),
    "hardswish": (1, "hardswish_"),
    "hardsigmoid": (1, "hardsigmoid_"),
    "threshold": (3, "threshold_"),
    "rrelu": (4, "rrelu_with_noise_"),
}

#: `F.dropout`-like functions: (position of `training`, position of `inplace`). Note that
#: `F.dropout` defaults to training=True whatever the module's mode.
FUNCTIONAL_DROPOUT: dict[str, tuple[int, int]] = {
    "dropout": (2, 3),
    "dropout1d": (2, 3),
    "dropout2d": (2, 3),
    "dropout3d": (2, 3),
    "alpha_dropout": (2, 3),
    "feature_alpha_dropout": (2, 3),
}

#: Optimizer classes of `torch.optim`: `step()` changes every parameter in place.
#: `torch.distributions`: the methods whose result is drawn, in no graph, and the attributes that are
#: tensors computed from a distribution's parameters.
DISTRIBUTION_DRAWS = frozenset({"sample", "sample_n", "enumerate_support"})
DISTRIBUTION_TENSORS = frozenset({"mean", "mode", "stddev", "variance", "probs", "logits", "loc", "scale", "rate",
                                  "concentration", "low", "high", "covariance_matrix", "scale_tril"})

# `functional_call(module, tensors, args, kwargs)`: the module's forward run with the parameters and
# buffers named in `tensors` (a dict by dotted name, or a tuple of dicts) in place of its own.
FUNCTIONAL_CALLS = frozenset({"torch.func.functional_call", "torch.nn.utils.stateless.functional_call",
                              "torch._functorch.functional_call.functional_call"})

# `vmap(f)`: `f` run over a batch; its call runs `f` on the batched arguments whole (the batched tensors
# share their storage and graph with what the call returns).
VECTORISING_MAPS = frozenset({"torch.vmap", "torch.func.vmap", "torch._functorch.apis.vmap", "torch._functorch.vmap.vmap"})

# `stack_module_state(models)`: `(params, buffers)`, each parameter a new leaf stacking the models' own.
STACK_MODULE_STATES = frozenset({"torch.func.stack_module_state", "torch._functorch.functional_call.stack_module_state"})

# Contexts under which the tensors autograd saves are not checked for in-place changes: any
# saved-tensor hooks turn off the version check (identity hooks then give wrong gradients without an
# error; `save_on_cpu()` of CPU tensors is one, as `tensor.cpu()` returns the tensor itself), and
# `allow_mutation_on_saved_tensors()` clones a saved tensor before it is changed.
UNCHECKED_SAVES = frozenset({"torch.autograd.graph.saved_tensors_hooks", "torch.autograd.graph.save_on_cpu",
                             "torch.autograd.graph.allow_mutation_on_saved_tensors"})

# Autocast regions (`with torch.autocast("cuda"):`); in them the ops of autocast's lower-precision
# list cast fp32 inputs to a copy in the lower precision and save that copy, not the tensor given.
AUTOCASTS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast",
                       "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})
FULL_PRECISION = frozenset({"torch.float32", "torch.float"})  # an autocast `dtype` that lowers nothing
AUTOCAST_LOWER_PRECISION = frozenset({
    "linear", "addmm", "mm", "bmm", "baddbmm", "addbmm", "matmul", "addmv", "mv", "addr", "chain_matmul",
    "linalg_vecdot", "convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cudnn_convolution", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "mkldnn_rnn_layer",
})

# Those of them whose output is in the lower precision on every device (CPU autocast keeps `mv`,
# `addr`, the RNN cells and `aten::convolution` itself in fp32): `.float()` of their output is a
# copy. A test runs them.
AUTOCAST_LOWERS = frozenset({
    "linear", "addmm", "mm", "bmm", "baddbmm", "matmul", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d",
})

# Ops that run in their input's precision under autocast, on every device (in none of autocast's
# lists: a `softmax` or `exp` runs in full precision on CUDA, in the lower one on the CPU). An
# output of a lower-precision op passed through them is still in the lower precision, and
# `.float()` of it is a copy; a test runs each under CPU autocast.
AUTOCAST_KEEPS_PRECISION = frozenset({
    "relu", "gelu", "silu", "sigmoid", "tanh", "hardtanh", "leaky_relu", "elu", "neg", "abs", "clamp",
    "dropout", "add", "sub", "mul", "div", "view", "reshape", "permute", "transpose", "t", "flatten", "unsqueeze",
    "squeeze", "select", "slice", "expand", "contiguous", "clone",
})

# `operator`'s arithmetic functions (`functools.reduce(operator.imul, gates)`): the tensor method
# each runs on its first argument; the `i` ones change it in place, as `a *= b` does.
OPERATOR_METHODS = {
    **{f"operator.{name}": name for name in ("add", "sub", "mul", "matmul")},
    "operator.truediv": "div", "operator.iadd": "add_", "operator.isub": "sub_", "operator.imul": "mul_",
    "operator.itruediv": "div_",
}

# Activation checkpointing: `checkpoint(fn, *args)` keeps none of `fn`'s saves (backward runs it
# again) but saves its tensor arguments; the options below are its own, not `fn`'s.
CHECKPOINTS = frozenset({"torch.utils.checkpoint.checkpoint"})
CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug"})

# `torch.compile`: its code runs as one compiled program, which saves what its backward needs.
# `torch.compile(fn, backend=...)` compiles `fn`; without it (and `torch._dynamo.optimize(backend)`)
# it gives a compiler, which a call or a decorator applies. The backends below run autograd's own
# saves, which raise as eager does. What inductor's backward does with a save changed outside its
# region, measured on torch 2.13 (tests/programs/compiled_*, rules/compiled_reads.py): a matrix
# product's operand it reads without checking its version (pytorch#197887), unless an operand is
# written transposed (`x @ W.T`, `x.T @ w`: checked, for 2-D products); `relu`'s output it reads as
# a mask made before the change; anything else (an elementwise product's input, `F.linear`'s) it
# checks, raising from inside its generated code.
COMPILERS = frozenset({"torch.compile", "torch._dynamo.optimize"})
DEFAULT_COMPILE_BACKEND = "inductor"
VERSION_CHECKED_BACKENDS = frozenset({"eager", "aot_eager"})
COMPILED_PRODUCTS = frozenset({"mm", "bmm", "matmul"})
BATCHED_PRODUCTS = frozenset({"bmm"})  # a transposed operand other than the changed one leaves the read unchecked
MATRIX_PRODUCTS = frozenset({"mm"})  # 2-D only: a transposed operand makes the read checked
COMPILED_MASKED_OUTPUTS = frozenset({"relu"})
TRANSPOSED_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
TRANSPOSING_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "adjoint"})
# Backends that trace the region through AOT autograd: an in-place change of a tensor the region
# itself saved fails the compilation at the first call (`BackendCompilerFailed`).
TRACING_BACKENDS = frozenset({"aot_eager", "inductor"})

# Composites whose saves depend on the kernel the backend picks (`scaled_dot_product_attention`'s
# flash and memory-efficient kernels save their output, its math path does not).
BACKEND_DEPENDENT = frozenset({"scaled_dot_product_attention"})

# AMP's loss scaler: `scale(loss)` multiplies by the scale, `step(optimizer)` runs `optimizer.step()`.
GRAD_SCALERS = frozenset({"torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.cuda.amp.GradScaler",
                          "torch.cpu.amp.GradScaler"})

OPTIMIZERS = frozenset({
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "NAdam", "RAdam",
    "RMSprop", "Rprop", "SparseAdam", "Adafactor", "Muon",
})
#: Python functions over an ATen op taking its list of tensors as `*tensors` (`torch.einsum("ij,jk", a, b)`):
#: the op's list argument and where its tensors start among the positional arguments.
VARARG_TENSORS: dict[str, tuple[str, int]] = {
    "einsum": ("tensors", 1), "block_diag": ("tensors", 0), "broadcast_tensors": ("tensors", 0),
    "meshgrid": ("tensors", 0), "cartesian_prod": ("tensors", 0), "chain_matmul": ("matrices", 0),
}
#: `getattr(torch.optim, name)` / `getattr(nn, name)` of a name not known (a configuration's): one
#: of the optimizers; a module of `torch.nn`, whose call keeps its input's graph, in-place or not unknown.
CHOSEN_BY_NAME = {"torch.optim": "torch.optim.Optimizer", "torch.nn": "torch.nn.Module"}
ANY_OPTIMIZER = CHOSEN_BY_NAME["torch.optim"]

#: Grad-mode context managers and decorators: name → grad enabled inside (None: from the argument).
GRAD_MODES: dict[str, bool | None] = {
    "torch.no_grad": False,
    "torch.enable_grad": True,
    "torch.inference_mode": False,
    "torch.set_grad_enabled": None,
    "torch.autograd.no_grad": False,
    "torch.autograd.enable_grad": True,
    "torch.autograd.grad_mode.no_grad": False,
    "torch.autograd.grad_mode.inference_mode": False,
    "torch.autograd.set_grad_enabled": None,
}

#: Calls that run backward through the graph.
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})

# torch functions that return their (first) argument itself
RETURNS_ARGUMENT = frozenset({"torch.jit._unwrap_optional"})

#: Modules that wrap a module (their first argument, `.module`) and run its forward when called.
MODULE_WRAPPERS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
})
