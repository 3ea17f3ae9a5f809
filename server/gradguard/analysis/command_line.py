"""A script's command line: `argparse` parsers and the namespaces they parse.

`parser.parse_args([])`, or a list of constant strings, gives the values argparse itself would
give. `parser.parse_args()` reads the command line, which the analysis cannot see: each option
holds its default marked as such (`ConstValue.default_of` is `COMMAND_LINE` and its flag), so the
script is analysed as run with its defaults, and a branch a default skips is analysed under that
assumption. As in argparse, a destination's default is its first option's, and `set_defaults`
overrides the defaults of the options added before it and gives those added after it theirs."""

from __future__ import annotations

import re

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
COMMAND_LINE = "argv:"  # `default_of` of a value the command line may change: this, then the option's name
_CONSTANT_ACTIONS = {"store_true": False, "store_false": True}
_CONVERSIONS = {"int": int, "float": float, "str": str}
_MANY = "many "  # how a list of values reads (`nargs="*"`): this, then how each one does
_OPTIONAL = "optional "  # how `nargs="?"` reads: this, then how its value does
_NEGATIVE = re.compile(r"-\d+$|-\d*\.\d+$")  # argparse's negative numbers: values, not options


def parser_method(parser: ArgumentParserValue, method: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """What `parser.method(*args, **kwargs)` returns, the parser recording the options it adds."""
    if method == "add_argument":
        _add_argument(parser, args, kwargs)
        return UNKNOWN
    if method in ("add_argument_group", "add_mutually_exclusive_group"):
        return parser  # a group's options are the parser's own
    if method == "set_defaults":
        for name, value in kwargs.items():
            parser.defaults[name] = value
            if name in parser.options:
                parser.options[name] = _marked(value, _shown(parser, name))
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
    optional = flags[0].startswith("-")
    destination = kwargs.get("dest")
    if isinstance(destination, ConstValue) and isinstance(destination.value, str):
        name = destination.value
    else:
        long = [f for f in flags if f.startswith("--")]
        name = (long or flags)[0].lstrip("-").replace("-", "_")
    reads, default = _reading(kwargs, optional)
    if "default" in kwargs:
        default = kwargs["default"]
    elif name in parser.defaults:
        default = parser.defaults[name]
    if isinstance(default, ConstValue) and isinstance(default.value, str) and reads in _CONVERSIONS:
        default = _converted(default.value, reads)  # argparse converts a string default
    if optional:
        parser.flags.update({flag: (name, reads) for flag in flags})
    else:
        parser.positionals.append((name, reads))
    if name not in parser.options:  # the first option of a destination gives its default
        parser.options[name] = _marked(default, sorted(flags, key=lambda f: not f.startswith("--"))[0])


def _reading(kwargs: dict[str, Value], optional: bool) -> tuple[str, Value]:
    """How an option reads its words (a conversion's name, an action's), and its default without
    one given (UNKNOWN: a value the command line must give)."""
    action, kind, nargs = kwargs.get("action"), kwargs.get("type"), kwargs.get("nargs")
    if isinstance(action, ConstValue) and action.value in _CONSTANT_ACTIONS:
        return str(action.value), ConstValue(_CONSTANT_ACTIONS[str(action.value)])
    if action is not None:  # `append`, `count`, a class of its own
        return "", ConstValue(None) if optional else UNKNOWN
    converts = kind.name if isinstance(kind, BuiltinRef) else "str" if kind is None else ""
    required = kwargs.get("required")
    if isinstance(required, ConstValue) and required.value:
        return converts, UNKNOWN
    if nargs is None:
        return converts, ConstValue(None) if optional else UNKNOWN
    if isinstance(nargs, ConstValue) and nargs.value == "?":
        return _OPTIONAL + converts, ConstValue(None)
    if not (isinstance(nargs, ConstValue) and nargs.value in ("*", "+")):
        return "", ConstValue(None) if optional else UNKNOWN  # `nargs=2`: read as not known
    return _MANY + converts, ConstValue(None) if optional else UNKNOWN


def _namespace(parser: ArgumentParserValue, given: Value) -> ModuleValue:
    """The namespace `parse_args(given)` returns: the defaults, with the options a constant list
    of strings sets; the command line's (`given` None or not known): the defaults, marked."""
    values = {name: value for name, value in parser.defaults.items() if name not in parser.options}
    values.update(parser.options)
    words = [w.value for w in given.items if isinstance(w, ConstValue) and isinstance(w.value, str)] \
        if isinstance(given, SequenceValue) and given.repeated is None else None
    if words is not None and len(words) == len(given.items):  # type: ignore[union-attr]
        values = {name: ConstValue(v.value) if isinstance(v, ConstValue) else v for name, v in values.items()}
        _read(parser, words, values)
    elif not (isinstance(given, ConstValue) and given.value is None):
        values = {name: UNKNOWN for name in values}  # a list the analysis does not know
    return ModuleValue(NAMESPACE, None, named_children=values, is_module=False)


def _read(parser: ArgumentParserValue, words: list[str], values: dict[str, Value]) -> None:
    """`values` as `words` set them (a word argparse would read otherwise: every option not known)."""
    index, positionals = 0, list(parser.positionals)
    while index < len(words):
        flag, _, attached = words[index].partition("=")
        if _option(flag):
            name, reads = parser.flags.get(flag, (None, ""))
            index += 1
        elif positionals:
            (name, reads), attached = positionals.pop(0), ""
        else:
            name, reads = None, ""
        start = index
        if not attached and reads not in _CONSTANT_ACTIONS and reads != "":
            while index < len(words) and not _option(words[index]) and (index == start or reads.startswith(_MANY)):
                index += 1
        value = _value(reads, [attached] if attached else words[start:index])
        if name is None or value is None or (index == start and not _option(flag)):
            for other in values:
                values[other] = UNKNOWN
            return
        values[name] = value


def _option(word: str) -> bool:
    """Whether argparse reads `word` as an option string, not a value (`-1` is a negative number)."""
    return word.startswith("-") and not _NEGATIVE.fullmatch(word)


def _value(reads: str, taken: list[str]) -> Value | None:
    """The value an option that reads so gets from the words `taken` (None: not one argparse takes)."""
    if reads in _CONSTANT_ACTIONS:
        return None if taken else ConstValue(not _CONSTANT_ACTIONS[reads])
    if reads.startswith(_MANY):
        return SequenceValue(tuple(_converted(word, reads.removeprefix(_MANY)) for word in taken), mutable=True)
    if reads.startswith(_OPTIONAL):
        return _converted(taken[0], reads.removeprefix(_OPTIONAL)) if taken else UNKNOWN
    return _converted(taken[0], reads) if len(taken) == 1 and reads in _CONVERSIONS else None


def _converted(text: str, kind: str) -> Value:
    try:
        return ConstValue(_CONVERSIONS[kind](text))
    except (KeyError, ValueError):
        return UNKNOWN


def _marked(value: Value, shown: str) -> Value:
    return ConstValue(value.value, default_of=COMMAND_LINE + shown) if isinstance(value, ConstValue) else value


def _shown(parser: ArgumentParserValue, destination: str) -> str:
    """How a destination is named on the command line: its first long option, or its own name."""
    return next((flag for flag, (name, _) in parser.flags.items() if name == destination and flag.startswith("--")),
                destination)
