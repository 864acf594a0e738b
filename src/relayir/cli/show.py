"""``relayir show MODEL``: the model as Relay text, after a chosen pass of the pipeline
``build`` runs (or after each), the time per pass, or only the fused functions (the
kernels) with their op counts: what a user reads to see why a model got faster.

The text parses back with ``relayir.parse``: constants are in the ``#[metadata]``
section (``--no-meta-data`` elides them for big models, as Relay's
``show_meta_data=False``)."""

from __future__ import annotations

from ..backend import bind_param_arrays, optimize
from ..backend.kernel_names import kernel_base_name
from ..ir.expr import Call, Op
from ..ir.functor import post_order
from ..ir.printer import astext
from ..ir.structural import structural_equal, structural_hash
from ..transform import PassContext
from ..transform.instrument import PassTimingInstrument
from ..typing.infer import infer_module
from .command import Command, add_model_options, load
from .console import Console
from .instruments import LeafPasses, PassProgress, primitive_functions
from .runners import CommandError


class CaptureAfter(LeafPasses):
    """The module's text after the named pass (every pass for ``"all"``)."""

    def __init__(self, name: str, text):
        super().__init__()
        self.name = name
        self.text = text
        self.seen: list[str] = []
        self.captured: list[tuple[str, str]] = []

    def after_leaf(self, mod, info, seconds: float) -> None:
        self.seen.append(info.name)
        if self.name in ("all", info.name):
            self.captured.append((info.name, self.text(mod)))


def add_arguments(p) -> None:
    p.add_argument("model", help="model file: .onnx, .pt2, .relay/.txt")
    p.add_argument("--after", metavar="PASS",
                   help="print the module after this pass (e.g. FuseOps), or 'all' for "
                        "after each pass (default: as imported, before any pass)")
    p.add_argument("--pass-timing", action="store_true", help="print the time per pass")
    p.add_argument("--fused", action="store_true",
                   help="print only the fused functions (kernels) and their op counts")
    p.add_argument("--types", action="store_true", help="annotate every value with its type")
    p.add_argument("--no-meta-data", action="store_true",
                   help="elide constants (meta[relay.Constant][i] without the #[metadata] "
                        "section): smaller, but it does not parse back")
    p.add_argument("--opt-level", type=int, default=3, choices=range(4), metavar="N",
                   help="optimisation level 0-3 (default: 3)")
    p.add_argument("--disabled-pass", metavar="P,...", default="",
                   help="passes not to run, comma-separated")
    add_model_options(p)


def run(args, console: Console) -> int:
    mod, params = load(args.model, args, console)
    if params:
        mod = bind_param_arrays(mod, params)
    mod = infer_module(mod.copy())

    def text(m) -> str:
        return astext(m, show_meta_data=not args.no_meta_data, show_types=args.types)

    if not (args.after or args.pass_timing or args.fused):
        console.print(text(mod))
        return 0
    capture = CaptureAfter(args.after or "", text)
    timing = PassTimingInstrument()
    disabled = [p.strip() for p in args.disabled_pass.split(",") if p.strip()]
    with console.task(f"optimising at opt level {args.opt_level}") as task, PassContext(
            opt_level=args.opt_level, disabled_pass=disabled,
            instruments=[PassProgress(console, task), timing, capture]):
        optimized = optimize(mod)
    if args.after:
        if not capture.captured:
            ran = ", ".join(dict.fromkeys(capture.seen))
            raise CommandError(f"--after {args.after}: no such pass ran; the passes run at "
                               f"opt level {args.opt_level} are {ran}")
        for i, (name, body) in enumerate(capture.captured):
            count = sum(1 for n, _ in capture.captured if n == name)
            which = f" (run {sum(1 for n, _ in capture.captured[:i] if n == name) + 1} of " \
                    f"{count})" if count > 1 else ""
            console.print(f"// after {name}{which}\n{body}")
    if args.fused:
        _fused(console, optimized, text)
    if args.pass_timing:
        _timing(console, timing)
    return 0


def _fused(console: Console, mod, text) -> None:
    groups: list[list] = []  # [function, calls]; structurally equal functions are one kernel
    by_hash: dict[int, list] = {}
    for fn in primitive_functions(mod):
        bucket = by_hash.setdefault(structural_hash(fn), [])
        same = next((g for g in bucket if structural_equal(g[0], fn)), None)
        if same is None:
            same = [fn, 0]
            bucket.append(same)
            groups.append(same)
        same[1] += 1
    rows = []
    for fn, calls in groups:
        ops = [n.op.name for n in post_order(fn.body) if type(n) is Call and type(n.op) is Op]
        name = kernel_base_name(fn)
        console.print(f"// {name}: {len(ops)} ops, {calls} call(s)\n{text(fn)}\n")
        rows.append([name, len(ops), calls, ", ".join(ops)])
    console.table(["fused function", "ops", "calls", "ops in order"], rows,
                  title=f"{len(groups)} fused functions")


def _timing(console: Console, timing: PassTimingInstrument) -> None:
    leaf = sum(sum(t) for n, t in timing.timings.items() if n not in timing.containers)
    rows = []
    for name, times in sorted(timing.timings.items(), key=lambda kv: -sum(kv[1])):
        total = sum(times)
        share = "" if name in timing.containers else f"{100 * total / (leaf or 1e-12):.1f}"
        rows.append([f"{name} *" if name in timing.containers else name, len(times),
                     f"{total * 1e3:.2f}", share])
    console.table(["pass", "calls", "total (ms)", "%"], rows,
                  title="time per pass (* contains the others)")


COMMAND = Command(
    "show", "print a model as Relay text after any pass, its fused kernels, pass times",
    "Import MODEL and print it as Relay text: as imported, after a pass of the pipeline "
    "build runs (--after FuseOps), after each pass (--after all), only its fused "
    "functions with their op counts (--fused), or the time per pass (--pass-timing).",
    ("relayir show model.onnx --after FuseOps > fused.relay",
     "relayir show model.pt2 --fused --no-meta-data",
     "relayir show model.relay --after all --types --pass-timing"),
    add_arguments, run)
