"""A script's command line: `argparse` parsers and the namespaces they parse.

`parser.parse_args([])`, or a list of constant strings, gives the values argparse itself would
give. `parser.parse_args()` reads the command line, which the analysis cannot see: each option
holds its default marked as such (`ConstValue.default_of` is its flag), so the script is analysed
as run with its defaults, and a branch a default skips is analysed under that assumption."""

from __future__ import annotations

from gradguard.analysis.values import (
    UNKNOWN,
    ArgumentParserValue,
    BuiltinRef,
    ConstValue,
    ModuleValue,
    SequenceValue,
    Value,
)

NAMESPACE = "argparse.Namespace"
_CONSTANT_ACTIONS = {"store_true": False, "store_false": True}
_CONVERSIONS = {"int": int, "float": float, "str": str}


def parser_method(parser: ArgumentParserValue, method: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """What `parser.method(*args, **kwargs)` returns, the parser recording the options it adds."""
    if method == "add_argument":
        _add_argument(parser, args, kwargs)
        return UNKNOWN
    if method in ("add_argument_group", "add_mutually_exclusive_group"):
        return parser  # a group's options are the parser's own
    if method == "set_defaults":
        for destination, value in kwargs.items():
            parser.options[destination] = _marked(value, _flag_of(parser, destination))
        return UNKNOWN
    if method in ("parse_args", "parse_known_args", "parse_intermixed_args"):
        given = args[0] if args else kwargs.get("args", ConstValue(None))
        namespace = _namespace(parser, given)
        return SequenceValue((namespace, UNKNOWN)) if method == "parse_known_args" else namespace
    return UNKNOWN


def _add_argument(parser: ArgumentParserValue, args: list[Value], kwargs: dict[str, Value]) -> None:
    flags = [a.value for a in args if isinstance(a, ConstValue) and isinstance(a.value, str)]
    if not flags or len(flags) != len(args):
        return
    destination = kwargs.get("dest")
    if isinstance(destination, ConstValue) and isinstance(destination.value, str):
        name = destination.value
    else:
        long = [f for f in flags if f.startswith("--")]
        name = (long or flags)[0].lstrip("-").replace("-", "_")
    action, kind = kwargs.get("action"), kwargs.get("type")
    if isinstance(action, ConstValue) and action.value in _CONSTANT_ACTIONS:
        parser.kinds[name] = str(action.value)
        default: Value = kwargs.get("default", ConstValue(_CONSTANT_ACTIONS[str(action.value)]))
    elif action is not None:  # `append`, `count`, a class of its own
        parser.kinds[name], default = "", kwargs.get("default", ConstValue(None)) if flags[0].startswith("-") else UNKNOWN
    else:
        parser.kinds[name] = kind.name if isinstance(kind, BuiltinRef) else "str" if kind is None else ""
        required = kwargs.get("required")
        positional = not flags[0].startswith("-") and kwargs.get("nargs") is None
        default = UNKNOWN if positional or (isinstance(required, ConstValue) and required.value) else \
            kwargs.get("default", ConstValue(None))
        if isinstance(default, ConstValue) and isinstance(default.value, str):  # argparse converts a string default
            default = _converted(default.value, parser.kinds[name])
    for flag in flags:
        parser.flags[flag] = name
    parser.options[name] = _marked(default, (sorted(flags, key=lambda f: not f.startswith("--"))[0]))


def _namespace(parser: ArgumentParserValue, given: Value) -> ModuleValue:
    """The namespace `parse_args(given)` returns: the defaults, with the options a constant list
    of strings sets; the command line's (`given` None or not known): the defaults, marked."""
    values = dict(parser.options)
    words = [w.value for w in given.items if isinstance(w, ConstValue) and isinstance(w.value, str)] \
        if isinstance(given, SequenceValue) else None
    if words is not None and len(words) == len(given.items):  # type: ignore[union-attr]
        values = {name: ConstValue(v.value) if isinstance(v, ConstValue) else v for name, v in values.items()}
        _read(parser, words, values)
    elif not (isinstance(given, ConstValue) and given.value is None):
        values = {name: UNKNOWN for name in values}  # a list the analysis does not know
    return ModuleValue(NAMESPACE, None, named_children=values, is_module=False)


def _read(parser: ArgumentParserValue, words: list[str], values: dict[str, Value]) -> None:
    """`values` as `words` set them (a word argparse would read otherwise: every option not known)."""
    index = 0
    while index < len(words):
        flag, _, attached = words[index].partition("=")
        name = parser.flags.get(flag)
        kind = parser.kinds.get(name, "") if name is not None else ""
        if name is not None and kind in _CONSTANT_ACTIONS and not attached:
            values[name] = ConstValue(not _CONSTANT_ACTIONS[kind])
            index += 1
        elif name is not None and (attached or index + 1 < len(words)) and kind in _CONVERSIONS:
            text = attached or words[index + 1]
            values[name] = _converted(text, kind)
            index += 1 if attached else 2
        else:
            for other in values:
                values[other] = UNKNOWN
            return


def _converted(text: str, kind: str) -> Value:
    try:
        return ConstValue(_CONVERSIONS[kind](text))
    except (KeyError, ValueError):
        return UNKNOWN


def _marked(value: Value, flag: str) -> Value:
    return ConstValue(value.value, default_of=flag) if isinstance(value, ConstValue) else value


def _flag_of(parser: ArgumentParserValue, destination: str) -> str:
    return next((flag for flag, name in parser.flags.items() if name == destination and flag.startswith("--")),
                f"--{destination}")
