"""Command line: `llm-deploy-wizard [size|models|gpus] ...` (DESIGN.md "Commands").

Heavy modules (rich, huggingface_hub, textual) are imported inside the command that needs them, so that
`size --json` answers in well under 0.2 s (benchmarks/startup.py measures it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from wizard.errors import InputError, printable

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_GPU = "h100-sxm-80gb"
# `doctor --symptom` ids, for --help only (trees/doctor.yaml defines them; a test keeps the two equal)
DOCTOR_SYMPTOMS = ("slower_on_more_gpus", "multi_node_hang", "overwhelmed_after_scale_out", "errors_during_rollout",
                   "bill_too_high")


class Parser(argparse.ArgumentParser):
    """argparse with DESIGN.md's error contract: one line naming what is wrong, exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; expected an integer >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is out of range; expected an integer >= 1")
    return value


def positive_int_or_auto(text: str) -> int | str:
    return "auto" if text.strip().lower() == "auto" else positive_int(text)


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; expected a fraction in [0.05, 1.0]") from None
    if not 0.05 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is out of range; expected a fraction in [0.05, 1.0]")
    return value


class VersionAction(argparse.Action):
    """`--version`: looked up only when asked (importlib.metadata is not free on every start)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None) -> None:  # noqa: A002
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from wizard.sizing.engines import DEFAULT_VLLM_VERSION

        try:
            own = version("llm-deploy-wizard")
        except PackageNotFoundError:  # run from a source tree without installing
            own = "(source tree)"
        print(f"llm-deploy-wizard {own} (plans and starter repos for vLLM {DEFAULT_VLLM_VERSION})")
        parser.exit()


def build_parser() -> Parser:
    from wizard.sizing.precision import KV_DTYPES, WEIGHT_PRECISIONS

    parser = Parser(prog="llm-deploy-wizard", description="Choose how to serve an LLM, with numbers you can check.")
    parser.add_argument("--version", action=VersionAction, help="print the version and the vLLM release targeted")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)

    size = sub.add_parser("size", help="memory fit of one model on one GPU layout (guide §2)")
    size.add_argument("model", help="Hub repo id, catalog id (see `models`) or local folder with config.json")
    size.add_argument("--gpu", default=DEFAULT_GPU, help=f"catalog GPU id (see `gpus`; default {DEFAULT_GPU})")
    size.add_argument("--tp", type=positive_int, default=1, help="tensor-parallel size (GPUs per stage)")
    size.add_argument("--pp", type=positive_int, default=1, help="pipeline-parallel size (stages)")
    size.add_argument("--context", type=positive_int_or_auto, default=None,
                      help="P99 prompt + output tokens per request (default: 8192, or the model's maximum if smaller); "
                           "auto: the longest that fits the concurrency (vLLM's --max-model-len -1)")
    size.add_argument("--concurrency", type=positive_int_or_auto, default=1,
                      help="P99 sequences in flight at peak; auto: the most that fit at the context")
    size.add_argument("--weight-precision", choices=WEIGHT_PRECISIONS, default="auto")
    size.add_argument("--kv-cache-dtype", choices=KV_DTYPES, default="auto")
    size.add_argument("--gpu-memory-utilization", type=fraction, default=None,
                      help="vLLM's budget share of the card (default: that vLLM version's, 0.92 in 0.33.0)")
    size.add_argument("--max-num-batched-tokens", type=positive_int, default=None,
                      help="vLLM scheduler token budget profiled at start-up (default: vLLM's for this GPU)")
    size.add_argument("--max-num-seqs", type=positive_int, default=None,
                      help="vLLM's sequence limit, profiled by the sampler (default: vLLM's for this GPU, as a plain "
                           "`vllm serve`)")
    size.add_argument("--vllm-version", default=None, metavar="VERSION",
                      help="the vLLM release that runs (PEP 440; default the pinned 0.33.0): its budget rules and defaults")
    size.add_argument("--prompt-tokens", type=positive_int, default=None,
                      help="typical prompt tokens: with --output-tokens, adds TTFT, TPOT and tokens/s (roofline, §5)")
    size.add_argument("--output-tokens", type=positive_int, default=None, help="typical output tokens")
    size.add_argument("--sampler", choices=("auto", "flashinfer", "native"), default="auto",
                      help="the top-k/top-p sampler vLLM warms up at start-up: auto = the release's default "
                           "(FlashInfer's from 0.21.0; PyTorch's, which sorts the vocabulary, before)")
    size.add_argument("--enforce-eager", action="store_true",
                      help="no CUDA graphs: vLLM then budgets no graph pool (guide §2, the reserve)")
    size.add_argument("--json", action="store_true", help="print one JSON object (fields: docs/json-output.md)")
    size.add_argument("--check", action="store_true",
                      help="for scripts: exit 1 when it does not fit (0 when it does), after printing as usual")

    plan = sub.add_parser("plan", help="walk the decision tree non-interactively from an answers file")
    plan.add_argument("--answers", required=True, metavar="FILE", help="answers YAML (keys: docs/answers-file.md)")
    plan.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override one answer (repeatable)")
    plan.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    plan.add_argument("--out", metavar="DIR", default=None, help="write the starter repo into DIR")
    lifecycle = plan.add_mutually_exclusive_group()
    lifecycle.add_argument("--force", action="store_true", help="replace DIR even if it is not empty")
    lifecycle.add_argument("--update", action="store_true",
                           help="regenerate the starter repo in DIR, keeping your edits (three-way merge; conflicts "
                                "marked, exit 1)")
    lifecycle.add_argument("--diff", action="store_true",
                           help="print the unified diff --update would make to DIR's files; writes nothing")
    lifecycle.add_argument("--dry-run", action="store_true",
                           help="list DIR's files with what --update would do to each; writes nothing")

    tree = sub.add_parser("tree", help="the decision tree: lint, show, paths, schema")
    tree.add_argument("action", choices=("lint", "show", "paths", "schema"))
    tree.add_argument("--tree", metavar="FILE", default=None, help="a tree file (default: the bundled one)")

    sub.add_parser("ask", help="the wizard's questions as line prompts (plain SSH, screen readers, small terminals)")

    schema = sub.add_parser("schema", help="the JSON Schema of a public JSON object")
    schema.add_argument("object", choices=("plan", "answers", "size"),
                        help="plan: plan --json and plan.json; answers: the answers file; size: size --json")

    doctor = sub.add_parser("doctor", help="§11 troubleshooting: from a symptom to its cause and fix, reading plan.json",
                            description="Walk the guide's §11 troubleshooting from a symptom to its cause and fix. "
                                        "On a terminal it asks; elsewhere --symptom and --answer carry the walk. "
                                        "With --plan, every check the plan settles is answered from it.")
    doctor.add_argument("--symptom", metavar="ID", default=None, help="the symptom: " + ", ".join(DOCTOR_SYMPTOMS))
    doctor.add_argument("--plan", metavar="plan.json", default=None,
                        help="a plan (`plan --json`, or a starter repo's plan.json): answers every check it can; "
                             "without --symptom and off a terminal, lists the causes the plan shows by itself")
    doctor.add_argument("--answer", action="append", default=[], metavar="KEY=VALUE",
                        help="answer a check (repeatable); wins over the plan's answer")
    doctor.add_argument("--json", action="store_true",
                        help="print one JSON object: {symptom, path: [{node, value, why, source}], cause, fix, section}")

    check = sub.add_parser("check-log", help="a vLLM start-up log against the sizing's prediction for the same run",
                           description="Read a vLLM start-up log (0.6 on: wrapped lines, colours, rank prefixes), "
                                       "predict the same figures with that release's memory profile, and show "
                                       "both with the difference and its likely cause. Exit 0 when the KV "
                                       "capacity matches within 3 %, 1 when it does not (or nothing could be "
                                       "compared: the verdict says why), 2 for a file that is no vLLM log.")
    check.add_argument("file", metavar="FILE", help="the start-up log (vllm serve's output, or a pod's logs)")
    check.add_argument("--model", default=None, help="the model, when the log does not name it (or to override)")
    check.add_argument("--gpu", default=None, help="catalog GPU id, when the log's total memory does not identify it")
    check.add_argument("--vllm-version", default=None, metavar="VERSION", help="the release, when the log does not say")
    check.add_argument("--concurrency", type=positive_int, default=None,
                       help="target sequences at the log's max_model_len: what to change to hold them")
    for flag, kind, what in (("--tp", positive_int, "tensor-parallel size"), ("--pp", positive_int, "pipeline stages"),
                             ("--max-model-len", positive_int, "max_model_len"),
                             ("--gpu-memory-utilization", fraction, "gpu_memory_utilization"),
                             ("--max-num-seqs", positive_int, "max_num_seqs"),
                             ("--max-num-batched-tokens", positive_int, "max_num_batched_tokens")):
        check.add_argument(flag, type=kind, default=None,
                           help=f"the run's {what}, when the log does not show it (a log that does wins, and says so)")
    check.add_argument("--sampler", choices=("flashinfer", "native"), default=None,
                       help="the run's top-k/top-p sampler, when the log does not say (default: the release's)")
    check.add_argument("--kv-cache-dtype", choices=("auto", "fp8"), default=None,
                       help="the run's --kv-cache-dtype, when the log does not show it (a log that does wins)")
    check.add_argument("--weights-from-log", action="store_true",
                       help="take the weights per GPU from the log ('Model loading took'): for a checkpoint the "
                            "catalog cannot size, --model names one of the same architecture")
    check.add_argument("--json", action="store_true", help="print one JSON object")

    bench = sub.add_parser("check-bench", help="a vllm bench serve result against the plan's predictions and targets",
                           description="Compare the measured TTFT and TPOT (mean, P99) and throughput of a saved "
                                       "`vllm bench serve` result (the starter repo's bench/run.sh) with the plan's "
                                       "predictions and P99 targets. Exit 0 when the targets hold, 1 when one fails "
                                       "(named), 2 for a file that is no benchmark result.")
    bench.add_argument("result", metavar="RESULT.json", help="the result JSON (bench/run.sh writes bench/result.json)")
    bench.add_argument("--plan", required=True, metavar="plan.json", help="the starter repo's plan.json")
    bench.add_argument("--json", action="store_true", help="print one JSON object")

    repo_check = sub.add_parser("check", help="re-run the starter repo's checks after you edited it",
                                description="Re-run the checks of a starter repo written by `plan --out` (or the "
                                            "wizard): bash -n and shellcheck on the scripts, yamllint, "
                                            "kubernetes-validate --strict on k8s/ (custom resources against their "
                                            "CRD), the kustomization, the checklist rules (probes, grace periods, "
                                            "securityContext...), plan.json against the manifests, every vLLM flag "
                                            "against the pinned vLLM, the gateway's compose.yaml and nginx -t. A "
                                            "check whose tool is not installed is skipped and says so (pip install "
                                            "'llm-deploy-wizard[check]'). Exit 0 when nothing failed, 1 when a "
                                            "check found a problem, 2 for a folder that is no starter repo.")
    repo_check.add_argument("dir", metavar="DIR", help="the starter repo's folder")
    repo_check.add_argument("--json", action="store_true",
                            help="print one JSON object: {dir, passed, checks: [{name, status, problems, "
                                 "skipped_because}]}")

    models = sub.add_parser("models", help="list the bundled model catalog, newest family first; or one model",
                            description="The bundled model catalog, grouped by family: families newest first (by "
                                        "their first public release), and within a family by total parameters, "
                                        "smallest first. With an ID, that one model's provenance: where its "
                                        "config.json and parameter count come from, architecture, maximum "
                                        "context, checkpoint format, whether the targeted vLLM serves it.")
    models.add_argument("id", nargs="?", default=None, metavar="ID",
                        help="a catalog id or alias (any case), or the name after the '/' of one catalog id")
    models.add_argument("--family", metavar="NAME", default=None,
                        help="only this family, e.g. Qwen3 or \"Llama 3.1\" (case does not matter)")
    models.add_argument("--json", action="store_true", help="print one JSON array (with ID: one object)")
    gpus = sub.add_parser("gpus", help="list the bundled GPU catalog")
    gpus.add_argument("--json", action="store_true", help="print one JSON array, every field of every GPU "
                                                          "(docs/json-output.md)")
    guide = sub.add_parser("guide", help="print a section of the deployment guide (§1-§13), or their list",
                           description="The deployment rules the wizard applies, section by section: every §N it "
                                       "shows is one of them (docs/guide/ in the source).")
    guide.add_argument("section", nargs="?", default=None, help="the section number, e.g. 5 (or §5)")
    return parser


EXIT_PIPE = 141  # what a shell reports for a process ended by SIGPIPE (`yes | head`)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _run(argv)
        sys.stdout.flush()  # inside the guard: a reader that closed the pipe is found here, not at exit
    except BrokenPipeError:
        # `plan --json | head`: the reader is gone; end quietly, and keep Python's exit-time flush from
        # printing "Exception ignored ... BrokenPipeError" by pointing stdout at /dev/null.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is not a real file (captured in tests)
            pass
        return EXIT_PIPE
    return code


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS.get(args.command, cmd_default)(args)
    except InputError as e:
        print(f"llm-deploy-wizard: error: {e.line()}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("llm-deploy-wizard: interrupted", file=sys.stderr)
        return 130


def cmd_default(args: argparse.Namespace | None = None) -> int:
    """No command: the full-screen wizard on a terminal; elsewhere one line saying what to run instead."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("llm-deploy-wizard: error: the full-screen wizard needs a terminal (stdin and stdout); use "
              "`llm-deploy-wizard ask` for line prompts or `llm-deploy-wizard plan --answers FILE`", file=sys.stderr)
        return EXIT_USAGE
    from wizard.tui.app import WizardApp

    app = WizardApp()
    app.run()
    return app.return_code or EXIT_OK  # textual sets 1 when the app ended on an unhandled error


def cmd_ask(args: argparse.Namespace) -> int:
    from wizard.prompts import run_ask

    return run_ask()


def cmd_size(args: argparse.Namespace) -> int:
    from wizard.sizing.fit import SizeInputs, size
    from wizard.sources.catalog import find_gpu
    from wizard.sources.resolve import resolve_model

    from wizard.sizing.engines import DEFAULT_VLLM_VERSION, profile_for

    version = args.vllm_version or DEFAULT_VLLM_VERSION
    engine = profile_for(version)  # an unknown release is one line before any model is read
    gpu = find_gpu(args.gpu)
    model = resolve_model(args.model)
    if args.context == "auto" and args.concurrency == "auto":
        raise InputError("--concurrency", "auto", "one of --context and --concurrency may be auto, not both")
    context = args.context if isinstance(args.context, int) else min(8192, model.max_position_embeddings)
    tokens, seqs = engine.default_batch(gpu, context, model, version)
    # Unspecified flags take that release's defaults, as a plain `vllm serve` does (serve_command says which).
    inputs = SizeInputs(
        tp=args.tp,
        pp=args.pp,
        context_tokens=context,
        concurrency=args.concurrency if isinstance(args.concurrency, int) else 1,
        weight_precision=args.weight_precision,
        kv_cache_dtype=args.kv_cache_dtype,
        gpu_memory_utilization=args.gpu_memory_utilization or engine.gpu_memory_utilization,
        max_num_batched_tokens=args.max_num_batched_tokens or tokens,
        max_num_seqs=args.max_num_seqs or seqs,
        enforce_eager=args.enforce_eager,
        vllm_version=version,
        sampler=args.sampler,
    )
    given = {name for name in ("gpu_memory_utilization", "max_num_batched_tokens", "max_num_seqs")
             if getattr(args, name) is not None}
    if args.context == "auto" or args.concurrency == "auto":
        from wizard.sizing.auto_limits import longest_context, most_sequences

        if args.context == "auto":
            follows = args.max_num_batched_tokens is None  # the default budget may follow the context (V0)
            inputs = inputs._replace(context_tokens=longest_context(model, gpu, inputs, follows))
            if follows:
                inputs = inputs._replace(max_num_batched_tokens=engine.default_batch(
                    gpu, inputs.context_tokens, model, version)[0])
        else:
            # at most max_num_seqs run at once: more would wait in vLLM's queue, not fit beside the others
            inputs = inputs._replace(concurrency=most_sequences(model, gpu, inputs, cap=inputs.max_num_seqs or 1_000_000))
    if inputs.max_num_batched_tokens is not None and inputs.max_num_seqs is not None \
            and inputs.max_num_batched_tokens < inputs.max_num_seqs:
        # vLLM's scheduler config refuses it: "max_num_batched_tokens must be greater than or equal to max_num_seqs"
        raise InputError("--max-num-batched-tokens", inputs.max_num_batched_tokens,
                         f"at least --max-num-seqs ({inputs.max_num_seqs}): vLLM refuses a smaller token budget")
    if (args.prompt_tokens is None) != (args.output_tokens is None):
        flag = "--prompt-tokens" if args.prompt_tokens is not None else "--output-tokens"
        raise InputError(flag, args.prompt_tokens or args.output_tokens, "give --prompt-tokens and --output-tokens together")
    result = size(model, gpu, inputs)
    from wizard.sizing.serve_command import ServeCommand, serve_command, tips

    command: ServeCommand = serve_command(result, given)
    advice = tips(result, given)
    perf = None
    if args.prompt_tokens is not None:
        from wizard.sizing.performance import Workload, performance

        perf = performance(result, Workload(inputs.concurrency, args.prompt_tokens, args.output_tokens))
    if args.json:
        from wizard.sizing.size_json import size_json
        from wizard.specs.contracts import to_json

        print(json.dumps(to_json(size_json(result, perf, command, advice)), indent=2))
    else:
        from wizard.report import print_size

        print_size(result, perf=perf, command=command, tips=advice)
    return 1 if args.check and not result.fits else EXIT_OK


def cmd_plan(args: argparse.Namespace) -> int:
    """`plan`: the plan from the answers (over the user's defaults file, under --set), printed; with --out the
    starter repo written. --update / --diff / --dry-run (wizard.session.repo_update) work on a starter repo this
    tool wrote in --out: --update prints what it did to each file on stderr and the plan on stdout, and exits 1
    when a file needs the user (conflict markers, a file it could not update); --diff prints the unified diff of
    what --update would do and --dry-run each file's state, on stdout, without the plan (no --json), exit 0."""
    from pathlib import Path

    from wizard.session.answers import defaults_file, load_answers_file, load_defaults, parse_set
    from wizard.session.plan import build_plan
    from wizard.session.session import run_answers

    lifecycle = next((f for f, on in (("--update", args.update), ("--diff", args.diff), ("--dry-run", args.dry_run))
                      if on), None)
    if lifecycle is not None and args.out is None:
        print(f"llm-deploy-wizard: error: {lifecycle} needs --out DIR, the starter repo to regenerate", file=sys.stderr)
        return EXIT_USAGE
    if lifecycle in ("--diff", "--dry-run") and args.json:
        print(f"llm-deploy-wizard: error: --json does not go with {lifecycle}, which prints the changes instead of the "
              "plan", file=sys.stderr)
        return EXIT_USAGE
    if args.out is not None and not args.out.strip():
        raise InputError("--out", args.out, "expected a folder path")
    defaults = load_defaults()
    given = {**load_answers_file(Path(args.answers)), **parse_set(args.set)}
    answers = {**defaults, **given}  # --set over the file over the user's defaults (over the tree's)
    if "model" not in answers:
        raise InputError(f"{Path(args.answers).name}: model", "missing", "the answers file must name the model")
    session = run_answers(answers)
    plan = build_plan(session)
    used = [k for k in defaults if k not in given]
    code = EXIT_OK
    if lifecycle in ("--diff", "--dry-run"):
        from wizard.session.repo_update import diff_lines, report_line, summary
        from wizard.session.starter_repo import compare_starter_repo

        preview = compare_starter_repo(session, plan, Path(args.out), lifecycle)
        _say_defaults(used, defaults_file())
        for change in preview.changes:
            if lifecycle == "--diff":
                sys.stdout.write("".join(diff_lines(change)))  # the files' own text, as git diff shows it
            else:
                print(printable(report_line(change)))
        marked = [c.path for c in preview.attention()]
        print(printable(f"llm-deploy-wizard: {lifecycle}: nothing was written; --update would do: {summary(preview)}"
                        + (f" (needing you: {', '.join(marked)})" if marked else "")), file=sys.stderr)
        return EXIT_OK
    if lifecycle == "--update":
        from wizard.session.repo_update import report_line, summary
        from wizard.session.starter_repo import update_starter_repo

        notices: list[str] = []
        try:
            done = update_starter_repo(session, plan, Path(args.out), notices=notices)
        finally:
            for notice in notices:
                print(f"llm-deploy-wizard: {printable(notice)}", file=sys.stderr)
        _say_defaults(used, defaults_file())
        for change in done.changes:
            print(printable(report_line(change)), file=sys.stderr)
        conflicts = [c.path for c in done.changes if c.state == "conflict"]
        skipped = [c.path for c in done.changes if c.state == "skipped"]
        line = f"updated the starter repo in {done.folder}: {summary(done)}"
        if conflicts:
            line += (f"; conflicts in {', '.join(conflicts)}: keep what you want between <<<<<<< yours and "
                     ">>>>>>> llm-deploy-wizard, then delete the markers")
        if skipped:
            line += f"; not updated: {', '.join(skipped)}"
        print(printable(f"llm-deploy-wizard: {line}"), file=sys.stderr)
        code = 1 if done.attention() else EXIT_OK
    elif args.out is not None:
        from wizard.session.starter_repo import write_starter_repo

        # The answers file was read whole: replacing the repo that holds it is safe; the model folder is kept.
        notices = []
        try:
            written = write_starter_repo(session, plan, Path(args.out), force=args.force, notices=notices,
                                         clear_saved=False)  # a saved interactive session is not this one
        finally:  # a restored folder is said even when the write is then refused
            for notice in notices:
                print(f"llm-deploy-wizard: {printable(notice)}", file=sys.stderr)
        _say_defaults(used, defaults_file())
        print(printable(f"wrote the starter repo to {written.path} — start with README.md, the reasons are in "
                        "RATIONALE.md"), file=sys.stderr)
    else:
        _say_defaults(used, defaults_file())
    if args.json:
        from wizard.specs.contracts import to_json

        print(json.dumps(to_json(plan), indent=2, default=str))
    else:
        from wizard.report import print_plan

        print_plan(plan, session.answers)
    return code


def _say_defaults(keys: list[str], path: object) -> None:
    """`plan`'s line on stderr naming the answers that came from the user's defaults file (none: no line). Said
    once the work succeeded, so an error stays the only line."""
    if keys:
        print(printable(f"llm-deploy-wizard: from your defaults ({path}): {', '.join(keys)}"), file=sys.stderr)


def cmd_tree(args: argparse.Namespace) -> int:
    from pathlib import Path

    from wizard.tree.loader import load_tree

    tree = load_tree(Path(args.tree) if args.tree else None)
    if args.action == "schema":
        from wizard.tree.loader import tree_json_schema

        print(json.dumps(tree_json_schema(), indent=2))
        return EXIT_OK
    from wizard.session.answers import accepted_values
    from wizard.session.computes import FUNCTIONS
    from wizard.tree.lint import lint

    report = lint(tree, FUNCTIONS, accepted_values())
    if args.action == "lint":
        from wizard.session.tree_replay import replay

        examples, problems = replay(tree, report.reached) if report.ok else ({}, [])
        report = report._replace(errors=report.errors + problems, reached=examples or report.reached)
        from wizard.report import print_lint

        print_lint(report)
        return EXIT_OK if report.ok else 1
    from wizard.report import print_tree_paths, print_tree_show

    if args.action == "show":
        print_tree_show(tree)
    else:
        print_tree_paths(tree, report)
    return EXIT_OK


def cmd_models(args: argparse.Namespace) -> int:
    """The catalog grouped by family, newest family first, then by total parameters SMALLEST first: a newcomer
    looks for what runs on the hardware at hand, and the smallest model is the cheapest to try (the ladder the
    families' own model cards climb; wizard/sources/families.py has the tie rules). `--family NAME` keeps one
    family: the exact name, any case (a prefix such as "qwen3" would match Qwen3, Qwen3-Next, Qwen3.5 ...); an
    unknown name exits 2 with one line naming the families of the catalog. `models ID`: that one model
    (wizard/sources/model_info.py); an unknown ID exits 2 with one line and the nearest ids."""
    if args.id is not None:
        return _model_details(args)
    from wizard.sizing.engine import unserved_reason
    from wizard.sources.catalog import entry_architecture
    from wizard.sources.families import catalog_listing, select_family

    listing = catalog_listing()
    if args.family is not None:
        listing = select_family(listing, args.family)
    if args.json:
        rows = []
        for m in listing:
            e = m.entry
            arch = entry_architecture(e)
            rows.append({"id": e.id, "family": e.family, "aliases": list(e.aliases), "source": e.source,
                         "architecture": arch, "unserved": unserved_reason(arch) or None,
                         "params": m.params, "active_params": m.active_params, "released": m.released,
                         "max_context_tokens": m.max_context, "checkpoint_format": m.checkpoint})
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    from wizard.report import print_models

    print_models(listing)
    return EXIT_OK


def _model_details(args: argparse.Namespace) -> int:
    from wizard.sources.model_info import find_catalog_model, model_details

    if args.family is not None:
        raise InputError("--family", args.family, f"give a model ID or --family, not both (ID {args.id!r})")
    details = model_details(find_catalog_model(args.id))
    if args.json:
        print(json.dumps(details, indent=2))
        return EXIT_OK
    from wizard.report import print_model_details

    print_model_details(details)
    return EXIT_OK


def cmd_gpus(args: argparse.Namespace) -> int:
    from wizard.sources.catalog import gpu_catalog

    gpus = gpu_catalog()
    if args.json:
        print(json.dumps([{k: getattr(g, k) for k in g._fields} for g in gpus], indent=2))
        return EXIT_OK
    from wizard.report import print_gpus

    print_gpus(gpus)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    if args.object == "answers":
        from wizard.session.answer_rules import json_schema

        schema = json_schema()
    else:
        from wizard.specs.contracts import json_schema as contract_schema

        schema = contract_schema(args.object)
    print(json.dumps(schema, indent=2))
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from wizard.doctor_ui import run_doctor

    return run_doctor(args.symptom, args.plan, args.answer, args.json)


def cmd_check_log(args: argparse.Namespace) -> int:
    from pathlib import Path

    from wizard.session.check_log import check_json, check_log

    run = {k: getattr(args, k) for k in ("tp", "pp", "max_model_len", "gpu_memory_utilization", "max_num_seqs",
                                         "max_num_batched_tokens", "sampler", "kv_cache_dtype")
           if getattr(args, k) is not None}
    result = check_log(Path(args.file), model=args.model, gpu=args.gpu, vllm_version=args.vllm_version,
                       concurrency=args.concurrency, run=run, weights_from_log=args.weights_from_log)
    if args.json:
        print(json.dumps(check_json(result), indent=2))
    else:
        from wizard.check_log_ui import print_check

        print_check(result)
    return EXIT_OK if result.matches else 1


def cmd_check_bench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from wizard.session.check_bench import bench_json, check_bench

    result = check_bench(Path(args.result), Path(args.plan))
    if args.json:
        print(json.dumps(bench_json(result), indent=2))
    else:
        from rich.markup import escape
        from rich.table import Table

        from wizard.report import new_console

        console = new_console()
        t = Table(title=f"Measured at {result.load} against the plan", title_justify="left")
        for col in ("metric", "predicted", "measured", "target", "verdict"):
            t.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
        for r in result.rows:
            t.add_row(r.metric, "—" if r.predicted is None else f"{r.predicted:,.1f}",
                      "—" if r.measured is None else f"{r.measured:,.1f}",
                      "—" if r.target is None else f"{r.target:,.0f}", r.verdict)
        console.print(t)
        console.print(f"[{'red' if result.failed else 'green'}]targets:[/] "
                      + (f"{', '.join(result.failed)} over the target" if result.failed else "hold"), highlight=False)
        for line in result.notes:
            console.print(f"[yellow]note:[/] {escape(line)}", highlight=False)
        for line in result.advice:
            console.print(f"[cyan]revisit:[/] {escape(line)}", highlight=False)
    return 1 if result.failed else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """`check DIR`: every check group of the starter repo; exit 0 when none failed (skipped ones do not fail),
    1 when one did, 2 (InputError) for a folder that is no starter repo of this tool."""
    from wizard.artifacts.repo_checks import check_repo

    report = check_repo(args.dir)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        for line in report.lines():
            print(printable(line))
    return EXIT_OK if report.passed else 1


def cmd_guide(args: argparse.Namespace) -> int:
    from wizard.guide import section, sections

    if args.section is None:
        for s in sections():
            print(f"§{s.number:<3} {s.title}")
        print("llm-deploy-wizard guide N prints one of them")
        return EXIT_OK
    raw = str(args.section).strip().lstrip("§")
    if not raw.isdigit():
        raise InputError("section", args.section, "expected a section number such as 5")
    s = section(int(raw))
    from rich.markdown import Markdown

    from wizard.report import new_console

    console = new_console()
    console.print(f"[bold]{s.heading}[/]")
    console.print(Markdown(s.text))
    return EXIT_OK


COMMANDS = {"check-bench": cmd_check_bench, "guide": cmd_guide, "size": cmd_size, "plan": cmd_plan, "tree": cmd_tree, "models": cmd_models, "gpus": cmd_gpus,
            "ask": cmd_ask, "schema": cmd_schema, "doctor": cmd_doctor, "check-log": cmd_check_log,
            "check": cmd_check}


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    raise SystemExit(main())
