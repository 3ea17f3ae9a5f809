"""The interpreter's parts and the state they share, each declared in one place.

`Interpreter` is assembled from parts, one object per file (`statements`, `expressions`,
`bindings`, `calls`, `frames`, `saved_tensors`, `tensor_ops`, `torch_calls`, `module_calls`,
`module_objects`, `custom_functions`, `user_calls`, `containers`). Each `Part` is given the run's
state (`InterpreterState`: every attribute a part reads or writes is declared, typed and described
there) and the other parts (`Parts`), whose methods it calls by name: `self.parts.expressions.eval(...)`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

import libcst as cst

from gradguard.analysis import budget
from gradguard.analysis.events import Deferred, InplaceChange, ScopeResult, Seen
from gradguard.analysis.state import State
from gradguard.analysis.values import CompiledRegion, ConstValue, Definitions, FunctionRef, SavedRecord, Value

if TYPE_CHECKING:
    from gradguard.analysis.bindings import Bindings
    from gradguard.analysis.calls import Calls
    from gradguard.analysis.containers import Containers
    from gradguard.analysis.custom_functions import CustomFunctions
    from gradguard.analysis.expressions import Expressions
    from gradguard.analysis.frames import Frames
    from gradguard.analysis.module_calls import ModuleCalls
    from gradguard.analysis.module_objects import ModuleObjects
    from gradguard.analysis.output_capture import Capture, OutputCapture
    from gradguard.analysis.pretrained_models import PretrainedModels
    from gradguard.analysis.project import ProjectIndex
    from gradguard.analysis.reuse import Reuse
    from gradguard.analysis.saved_tensors import SavedTensors
    from gradguard.analysis.statements import Statements
    from gradguard.analysis.tensor_ops import TensorOps
    from gradguard.analysis.torch_calls import TorchCalls
    from gradguard.analysis.user_calls import UserCalls


@dataclass
class GeneratorRun:
    """A generator's body running for one element of an iteration over it: the values its `yield`s
    gave (each path stops at its first), which of them ran, and what was saved on the way to them."""

    function: cst.FunctionDef
    yields: list[Value] = field(default_factory=list)
    reached: set[cst.Yield] = field(default_factory=set)
    saves: dict[int, tuple[SavedRecord, ...]] = field(default_factory=dict)


RETURNED = "<return>"  # the name a `Returns.state` binds the returned value to (no Python name can clash)


@dataclass
class Returns:
    """What a running function's `return`s gave so far: each value, and the states at them joined, the
    value bound to `RETURNED` (what was saved and changed on the way to a `return` reaches the caller)."""

    values: list[Value] = field(default_factory=list)
    state: State | None = None
    # what it returns goes straight to the entry point's own `return` (it is the entry point, or
    # the call its caller returns at once, itself such a function), and the call it returns at once
    # (none inside a `try` with handlers or a `finally`: code of its own runs after that `return`)
    tail: bool = False
    tail_call: cst.CSTNode | None = None
    guarded: int = 0  # the `try` statements with handlers or a `finally` that the running statement is in

    def add(self, value: Value, state: State) -> None:
        self.values.append(value)
        at_return = state.copy()
        at_return.env[RETURNED] = value
        self.state = at_return if self.state is None else self.state.join(at_return)

    def exit(self, end: State) -> State:
        """The state the function leaves its caller: where it ran off its end (returning None) joined
        with those at its `return`s."""
        if self.state is None:
            return end
        if end.dead:
            return self.state
        end.env[RETURNED] = ConstValue(None)
        return end.join(self.state)


@dataclass
class LoopExits:
    """The states at the `continue`s and `break`s of the running pass of a loop's body: the former
    meet the end of the pass, the latter the point after the loop."""

    continued: list[State] = field(default_factory=list)
    broken: list[State] = field(default_factory=list)

    def mark(self) -> tuple[int, int]:
        """Where the jumps made from now on begin (`since`)."""
        return len(self.continued), len(self.broken)

    def since(self, mark: tuple[int, int]) -> list[State]:
        """The states of the jumps made since `mark` (a `with` or `finally` they jumped out of acts on them)."""
        return [*self.continued[mark[0]:], *self.broken[mark[1]:]]

    def drop_since(self, mark: tuple[int, int]) -> None:
        """Forget the jumps made since `mark` (those of a branch run on a copy, which never joins)."""
        del self.continued[mark[0]:], self.broken[mark[1]:]

    def end_of_pass(self, end: State) -> State:
        """The state at the end of the pass: where its body ran off its end joined with its `continue`s."""
        for continued in self.continued:
            end = end.join(continued)
        self.continued.clear()
        return end

    def after_loop(self, end: State) -> State:
        """The state after the loop: where it ended joined with its `break`s."""
        for broken in self.broken:
            end = end.join(broken)
        return end


BACKWARD = -1  # in `InterpreterState.touched`: a backward pass ran (it changes what is pending and saved)
CHANGED_OBJECT = -2  # in `InterpreterState.touched`: code ran that may change a module, list or dict made before it

class InterpreterState:
    """What one interpretation of a file knows besides the abstract state of a program point."""

    def __init__(self, module: cst.Module, path: str | None, project: ProjectIndex | None,
                 previous: ScopeResult | None, replaced: frozenset[cst.FunctionDef], hovers: bool = False) -> None:
        # the file
        self.module = module
        # its top-level names and classes: an open document's, as its previous run left them (`TopLevel`)
        self.adopted = previous is not None and previous.top_level is not None and \
            previous.definitions is not None and previous.definitions.path == path
        if self.adopted:
            self.definitions = previous.definitions  # type: ignore[union-attr, assignment]
            previous.top_level.put_into(self.definitions)  # type: ignore[union-attr]
        else:
            self.definitions = Definitions(path, module)
        self.project = project  # resolves names imported from the project's other files
        # reuse of the previous version's result (see `Interpreter.run`)
        self.previous = previous
        self.replaced = replaced  # the previous version's functions this version no longer has
        self.bodies_only = False  # only function bodies (not `__init__`) were replaced (set by `Interpreter`)
        self.module_reused = False  # the previous version's module-level result stands (only function bodies changed)
        self.reuse: Reuse | None = None  # when it does not: which of the previous units stand
        self.source_of: Callable[[cst.CSTNode], str | None] = _no_source  # a top-level statement's text, if at hand
        self.checkpoints_at: frozenset[int] = frozenset()  # top-level statements a checkpoint is taken before
        # the function being analysed changed what later analyses see: a tensor's flags in the module's
        # modules (`set_flags`), a class it defines, a function whose calls are no longer followed
        self.shared_changed = False
        # what the interpretation found
        self.result = ScopeResult()
        self.entered: set[cst.FunctionDef] = set()  # the functions the code being analysed followed calls into
        self.splatted: set[cst.FunctionDef] = set()  # the `__init__`s among them given keywords not known
        self.hovers = hovers  # whether to remember what each name held (an editor's hovers ask)
        # an installed library's file read for the files that import it: its top level binds names
        # only (its module-level calls into other files are not followed, its classes get no template
        # from `__init__`'s defaults); its code runs when a call of the project's follows it
        self.library = False
        # whether a class's `__init__` runs where the class is defined, on its defaults, for the template
        # of its instances (`ModuleObjects.instantiate`: what a call of the class that cannot be followed
        # gives). Not in a file read for the files that import it: an importer instantiates few of
        # the classes it reads, and its calls of them are followed
        self.templates = True
        self.seen: dict[cst.Name, Seen] = {}  # what each name of the file's own code held
        self.deferred: list[Deferred] = []  # the functions and methods left to analyse after the module level
        self.planned: set[cst.FunctionDef] = set()  # every function deferred so far (each is analysed once)
        # what the analysis may spend (shared with the imported files it reads), and the functions
        # whose followed calls spent their budget (later calls of them are not followed)
        self.budget = budget.active() or budget.Budget()
        self.cut_calls: set[cst.FunctionDef] = set()
        self.super_frames = 0  # frames on the call stack that `super()` calls run: a class hierarchy's depth is not a call's
        self.captures: list[Capture] = []  # the `@capture_outputs` forwards running, innermost last (`OutputCapture`)
        # the functions and methods of this file a decorator of its own replaced by a wrapper it defines
        # (`@residual` returning `wrapper`, which calls the function it closes over): calls run the wrapper
        self.wrappers: dict[cst.FunctionDef, FunctionRef] = {}
        self.wrapper_code: set[cst.FunctionDef] = set()  # every wrapper made so (a chain's inner ones too)
        self.lineages: set[tuple[int, str]] = set()  # the classes whose imported bases were resolved (`find_method`)
        # the changes no backward pass has reached yet
        self.pending: list[InplaceChange] = []
        # for the entry point being analysed: the saves reachable from what it handed to code the
        # analysis did not follow (which may keep it), and the values its own `yield`s gave
        self.handed_over: set[int] = set()
        self.yielded_here: list[Value] = []
        # the statement (or this file's call) whose backward pass last freed each version counter's saves
        self.freed: dict[int, cst.CSTNode] = {}
        self.backward_runs = 0  # backward passes run so far (`OptimizerValue.cleared_at`)
        self.autocast = 0  # autocast regions (`with torch.autocast(...)`) the code runs in, callers' included
        self.autocast_maybe = 0  # and those whose `enabled` flag is not known
        self.unchecked_saves = 0  # the `saved_tensors_hooks` (and kin) regions open: saves no change can break
        self.compiled: CompiledRegion | None = None  # the compiled region (`torch.compile`) the code runs in
        self.next_serial = 1  # the serial of the next saved record (a tensor's `history` holds serials)
        # the version counters of the tensors changed in place or whose flags changed, in turn (BACKWARD: a
        # backward pass ran; CHANGED_OBJECT: another object may have changed): a call that touched one it
        # did not create has effects a summary would skip
        self.touched: list[int] = []
        # the function analysed without a known caller, and whether it is a method of an `nn.Module`
        self.analysing: cst.FunctionDef | None = None
        self.in_module_method = False
        self.evidence: dict[cst.FunctionDef, bool] = {}  # `grad_evidence` of each entry point, once
        # the parameter whose default the branch running skips (`Statements._other_branch`), if any
        self.assuming: str | None = None
        self.undo: list[tuple[dict, str, object]] = []  # the module attributes that branch bound, as they were
        # followed calls: a stack of the functions running, the files they are in and the calls into them
        self.call_stack: list[cst.FunctionDef] = []
        self.followed = 0  # calls followed so far for the function (or module level) being analysed
        self.call_definitions: list[Definitions] = []
        self.call_selves: list[int] = []  # `id` of the object each frame of `call_stack` runs on (0: none)
        self.call_nodes: list[cst.CSTNode] = []
        self.returns: list[Returns] = []  # what each running function returned so far
        self.loop_exits: list[LoopExits] = []  # where the running loops' passes jumped out
        self.generator_runs: list[GeneratorRun] = []  # the generators whose bodies run for an iteration over them
        self.last_callee_env: dict[str, Value] = {}  # the names of the function a call last ran, at its end
        # a call into another file's code: (this file's call, its label, report every change) and the
        # saves made inside it (only changes of this file's saves are reported, at that call)
        self.call_site: tuple[cst.CSTNode, str, bool] | None = None
        self.callee_records: set[int] = set()
        # summaries of calls given constants or unknown values (a factory, a layer built from a
        # config): what the call returned or built, and the functions it ran; a later call with the
        # same arguments, in any function of this file's analysis, gets a copy (`UserCalls.summarised`:
        # only of calls with no effect but their result, all of whose own calls were followed)
        self.summaries: dict[tuple[object, ...], tuple[Value, frozenset[cst.FunctionDef]]] = {}
        # how many calls were left unfollowed (the depth, recursion, the count of calls, a tail call,
        # a call cut short), how many of them for where they ran (the depth, a recursion, a tail
        # call, a call's steps), and how many hand-overs reached a save (`UserCalls.summarised`)
        self.unfollowed = 0
        self.placed = 0
        self.hand_overs = 0
        # facts of the code alone (a loop's break/continue, whether a function may build what it
        # returns), each computed once per node and analysis
        self.syntax_facts: dict[tuple[cst.CSTNode, object], object] = {}
        # where the interpretation is
        self.current_line: cst.SimpleStatementLine | None = None
        self.unrolling = 1  # the passes of the loops unrolled around this point (over known sequences, one inside another)
        self.loop_depth = 0  # loops running to their fixed point, one inside another

    def jumps_from_here(self) -> tuple[LoopExits | None, tuple[int, int]]:
        """The innermost running loop's exits, and where the jumps made from now on begin in them."""
        exits = self.loop_exits[-1] if self.loop_exits else None
        return exits, exits.mark() if exits is not None else (0, 0)

    def current_file(self) -> str | None:
        """The file whose code runs now: this one, or that of the followed call running."""
        return self.call_definitions[-1].path if self.call_stack else self.definitions.path

    @contextmanager
    def compiling(self, backend: str | None, call: cst.CSTNode | None) -> Iterator[None]:
        """Run code compiled for `backend` (None: as it is), entered by `call`; inside a compiled
        region, its callees are part of it (the region stays)."""
        outer = self.compiled
        self.compiled = outer or (CompiledRegion(backend, call) if backend is not None else None)
        try:
            yield
        finally:
            self.compiled = outer


def _no_source(node: cst.CSTNode) -> None:
    return None


class Parts:
    """The interpreter's parts, one of each (`Interpreter` makes them): how a part reaches another."""

    statements: Statements  # each kind of statement
    expressions: Expressions  # each kind of expression
    bindings: Bindings  # assignment targets, names bound and rebound
    calls: Calls  # a call dispatched by its callee or receiver
    frames: Frames  # a function's body in a frame of its own, entry points planned and cut short
    saved_tensors: SavedTensors  # saves, in-place changes, backward
    tensor_ops: TensorOps  # ATen ops and tensor methods
    torch_calls: TorchCalls  # the torch API by name
    module_calls: ModuleCalls  # calls of `nn.Module`s and their methods
    module_objects: ModuleObjects  # modules and objects built, their attributes
    custom_functions: CustomFunctions  # custom autograd Functions
    user_calls: UserCalls  # the project's own functions
    containers: Containers  # lists, dicts, builtins
    output_capture: OutputCapture  # what transformers' `@capture_outputs` forwards collect
    pretrained: PretrainedModels  # transformers' generic model code, by its effect


class Part:
    """One of the interpreter's parts: given the run's state and the other parts."""

    def __init__(self, run: InterpreterState, parts: Parts) -> None:
        self.run = run
        self.parts = parts
