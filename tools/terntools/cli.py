"""The `tern` command: argument parsing and the glue between the modules.

Errors are one line on stderr, "tern <command>: <what is wrong>"; a usage
error (bad flag, missing file, unknown board) exits 2, a failure of the
thing being run exits 1, and `tern run` exits with the guest's status.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO, cast

from terntools import (avrprofile, bipsbench, build, comos, executor, itrace, micro, perfetto, readme, scenario, seed000,
                       seed000_report, seed000_targets, seed000_verdict, seed001, seed001_gpio, seed003, sim, simbench,
                       sizes, soak, timeline, trace)
from terntools import comos_memory, comos_migration, comos_psync, comos_ssl  # noqa: F401  (`tern bench comos` experiments)
from terntools.boards import Board, load_board
from terntools.errors import TernError, UsageError
from terntools.paths import repo_root
from terntools.runner import run_image


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors ("tern run: ... (see tern run --help)")."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _open_out(path: Path) -> TextIO:
    """Open an output file for writing, making its directory first."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def _write_json(path: Path, doc: Any) -> None:
    with _open_out(path) as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


# --------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    board = load_board(args.board)
    if (args.image is None) == (args.app is None):
        raise UsageError("give either IMAGE or --app NAME")
    if args.app is not None:
        args.image = build.app_image(board.name, args.model, args.app)
    sink = _open_out(args.trace_out) if args.trace_out else None
    try:
        result = run_image(
            board,
            args.image,
            args.timeout,
            max_cycles=args.max_cycles,
            console=sys.stdout.buffer,
            stderr_echo=sys.stderr,
            trace_sink=sink,
        )
    finally:
        if sink is not None:
            sink.close()
    if result.malformed_trace_lines:
        print(f"tern run: {result.malformed_trace_lines} trace lines could not be decoded and were echoed",
              file=sys.stderr)  # fmt: skip
    if result.note:
        print(f"tern run: {result.note}", file=sys.stderr)
    status = result.status
    if status < 0:  # killed by a signal: report it as a shell would
        print(f"tern run: emulator killed by {signal.Signals(-status).name}", file=sys.stderr)
        status = 128 - status
    return status


# --------------------------------------------------------------------------- trace


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def cmd_trace_decode(args: argparse.Namespace) -> int:
    events = trace.read_events(_read_text(args.file))
    out = sys.stdout
    if args.view == "events":
        rows: list[dict[str, Any]] = [ev.to_json() for ev in events]
        lines = trace.format_events(events)
    else:
        analysis = trace.analyse(events)
        if args.view == "jobs":
            rows = [
                {"task": j.task, "port": j.port, "start": j.start, "end": j.end, "ticks": j.duration,
                 "preempted": j.preempted, "irq": j.irq, "depth": j.depth}
                for j in analysis.jobs
            ]  # fmt: skip
            lines = trace.format_jobs(analysis.jobs)
        else:
            rows = [{"start": p.start, "end": p.end, "ticks": p.duration, "state": p.state} for p in analysis.idle]
            lines = trace.format_idle(analysis.idle)
        notes = [
            (analysis.unmatched_ends, "HANDLER_END events had no open job"),
            (len(analysis.open_jobs), "jobs were still open at the end"),
            (analysis.unmatched_idle, "idle events were unpaired"),
            (analysis.lost_events, "events were lost (ring overflow)"),
        ]
        for count, what in notes:
            if count:
                print(f"tern trace: {count} {what}", file=sys.stderr)
    if args.json:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    else:
        for line in lines:
            out.write(line + "\n")
    return 0


def cmd_trace_export(args: argparse.Namespace) -> int:
    board = load_board(args.board) if args.board else None
    names = perfetto.parse_task_names(args.tasks)
    if not args.input.exists():
        raise UsageError(f"{args.input} does not exist")
    doc = perfetto.export(args.input, board, names, repo_root())
    try:
        perfetto.write(doc, args.output)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    print(f"wrote {args.output}: {perfetto.summary(doc)}; open it in https://ui.perfetto.dev (Open trace file)")
    return 0


# --------------------------------------------------------------------------- bench seed000


def _report(doc: dict[str, Any], args: argparse.Namespace) -> None:
    runs = doc["runs"]
    headline = seed000_report.headline_runs(runs) if args.verdict else []
    if headline and len(headline) < len(runs):
        # --verdict: the rows the verdict speaks of; every run is in the JSON
        print(f"seed 000, n = {', '.join(map(str, seed000_report.HEADLINE_N))} and "
              f"l_s = {', '.join(f'{ls} ms' for ls in seed000_report.HEADLINE_LS_MS)} "
              f"({len(headline)} of {len(runs)} runs{f'; all in {args.json}' if args.json else ''}):")  # fmt: skip
        sys.stdout.write(seed000_report.text_table(headline))
    else:
        sys.stdout.write(seed000_report.text_table(runs))
    if args.json:
        _write_json(args.json, doc)
    plots: list[Path] = []
    if args.plots:
        plots = seed000_report.write_plots(runs, args.plots)
        if plots:
            print(f"\nplots in {args.plots}/: {', '.join(p.name for p in plots)}")
    if args.report:
        text = seed000_report.markdown_report(doc, plots, args.report.resolve().parent)
        with _open_out(args.report) as f:
            f.write(text)
        if args.verdict:
            print(f"report: {args.report}")
    if args.verdict:
        sys.stdout.write("\n" + seed000_verdict.verdict_text(doc))


def _load_results(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    missing = [k for k in seed000.TOP_KEYS if k not in doc]
    if missing:
        raise UsageError(f"{path}: not a seed000 result (missing {', '.join(missing)})")
    return cast(dict[str, Any], doc)


def cmd_bench_seed000(args: argparse.Namespace) -> int:
    if args.from_json:
        doc = _load_results(args.from_json)
        failures: list[str] = list(doc.get("failures", []))
    else:
        if not args.board:
            raise UsageError("--board is required (unless --from-json)")
        board: Board = load_board(args.board)
        plan = seed000.SweepPlan(
            board=board,
            models=seed000.parse_models(args.models) if args.models else seed000.board_models(board),
            ns=seed000.parse_int_list(args.n, "--n", minimum=1),
            ls_ms=seed000.parse_int_list(args.ls, "--ls", minimum=0),
            samples=args.samples,
            seed=args.seed,
            jobs=args.jobs,
            timeout=args.timeout,
            build=not args.no_build,
            logs_dir=args.logs,
            scheduler=args.scheduler,
        )
        commit = seed000.source_commit(repo_root())
        result = seed000.run_sweep(plan, progress_stream=sys.stderr, root=repo_root())
        doc, failures = result.doc, result.failures
        for run in doc["runs"]:
            run["commit"] = commit
        try:  # RAM for the verdict: `tern size` of every image that ran
            doc["sizes"] = seed000.image_sizes(board, dict.fromkeys(r["model"] for r in doc["runs"]), repo_root())
        except TernError as exc:
            print(f"tern bench seed000: no image sizes: {exc}", file=sys.stderr)
    if args.merge:
        doc = seed000.merge(_load_results(args.merge), doc)
    if args.issue17:
        board17 = load_board(args.board or doc["board"])
        doc["issue17"] = seed000_targets.measure(board17, repo_root(), seed000.source_commit(repo_root()))
    _report(doc, args)
    problems = seed000.check_results(doc)
    for p in problems:
        print(f"tern bench seed000: inconsistent: {p}", file=sys.stderr)
    if failures:
        print(f"tern bench seed000: {len(failures)} configuration(s) failed", file=sys.stderr)
    return 1 if failures or problems else 0


# --------------------------------------------------------------------------- size


def cmd_bench_seed003(args: argparse.Namespace) -> int:
    if args.from_json:
        doc = json.loads(_read_text(str(args.from_json)))
        if not isinstance(doc, dict) or "runs" not in doc:
            raise UsageError(f"{args.from_json}: not a seed003 result (no 'runs')")
    else:
        if not args.board:
            raise UsageError("--board is required (unless --from-json)")
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        params = seed003.Params(duration_s=args.duration, ls_ms=args.ls, period_ms=args.period,
                                gap_cycles=args.gap, lp_cycles=args.lp,
                                neighbours=args.neighbours, seed=args.seed)
        doc = seed003.run_bench(load_board(args.board), models, params, args.timeout,
                                root=repo_root(), log_dir=args.logs, jobs=args.jobs, scheduler=args.scheduler)
    sys.stdout.write(seed003.text_table(doc))
    if args.json:
        _write_json(args.json, doc)
    if args.plots:
        for path in seed003.write_plots(doc, args.plots):
            print(f"wrote {path}")
    return 0


def cmd_bench_seed001_net(args: argparse.Namespace) -> int:
    if args.from_json:
        doc = json.loads(_read_text(str(args.from_json)))
        if not isinstance(doc, dict) or "one_hop" not in doc:
            raise UsageError(f"{args.from_json}: not a seed001 net result (no 'one_hop')")
    else:
        spec = args.hops if args.hops is not None else ("1,2,3,4,5" if args.link == "csma" else "")
        hops = tuple(int(h) for h in spec.split(",") if h.strip())
        plan = seed001.Plan(board=load_board(args.board), p=args.loss, latency_samples=args.latency_samples,
                            throughput_samples=args.throughput_samples, hops=hops,
                            hop_latency_samples=args.hop_latency_samples,
                            hop_throughput_samples=args.hop_throughput_samples, seed=args.seed, link=args.link)
        doc = seed001.run_bench(plan, args.work, root=repo_root(), log=sys.stderr)
    sys.stdout.write(seed001.text_table(doc))
    if args.json:
        _write_json(args.json, doc)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(seed001.markdown_tables(doc))
        print(f"wrote {args.markdown}")
    if args.plots:
        for path in seed001.write_plots(doc, args.plots):
            print(f"wrote {path}")
    return 0


def cmd_bench_seed001_gpio(args: argparse.Namespace) -> int:
    """gpio, irq, memory and power: one experiment each (seed001_gpio)."""
    if args.from_json:
        doc = json.loads(_read_text(str(args.from_json)))
        if not isinstance(doc, dict) or args.experiment not in doc.get("experiments", []):
            raise UsageError(f"{args.from_json}: not a seed001 {args.experiment} result")
    else:
        board = load_board(args.board)
        models = tuple(m.strip() for m in args.models.split(",") if m.strip()) if args.models else board.models
        plan = seed001_gpio.Plan(board=board, models=models, toggles=args.toggles, edges=args.edges,
                                 power_edges=args.power_edges, net_datagrams=args.net_datagrams, seed=args.seed)
        doc = seed001_gpio.run_bench(plan, args.work, (args.experiment,), root=repo_root(), log=sys.stderr)
    text = seed001_gpio.markdown_tables(doc)
    sys.stdout.write(text)
    if args.json:
        _write_json(args.json, doc)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text)
        print(f"wrote {args.markdown}")
    if args.plots:
        for path in seed001_gpio.write_plots(doc, args.plots):
            print(f"wrote {path}")
    return 0


def cmd_bench_micro(args: argparse.Namespace) -> int:
    docs: list[dict[str, Any]] = []
    if args.from_json:
        docs = [micro.load(path) for path in args.from_json]
        doc = docs[0]
    else:
        if not args.board:
            raise UsageError("--board is required (unless --from-json)")
        models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
        command = " ".join(["./tern", "bench", "micro"] + sys.argv[3:]) if sys.argv[1:3] == ["bench", "micro"] else ""
        doc = micro.run_board(load_board(args.board), models, args.count, args.jobs, args.timeout,
                              root=repo_root(), do_build=not args.no_build, command=command,
                              progress=lambda text: print(f"tern bench micro: {text}", file=sys.stderr),
                              scheduler=args.scheduler)
        docs = [doc]
    for d in docs:
        sys.stdout.write(micro.text_table(d))
    if args.json:
        _write_json(args.json, doc)
    if args.doc:
        with _open_out(args.doc) as f:
            f.write(micro.markdown_many(docs))
    return 0


def cmd_bench_itrace(args: argparse.Namespace) -> int:
    board = load_board(args.board)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    benches = [b.strip() for b in args.benchmarks.split(",") if b.strip()]
    results = [itrace.trace(board, m, b, args.samples, repo_root()) for m in models for b in benches
               if b in itrace.WINDOWS]
    command = " ".join(["./tern", "bench", "itrace"] + sys.argv[3:])
    text = itrace.markdown(board, results, command)
    if args.doc:
        with _open_out(args.doc) as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_size(args: argparse.Namespace) -> int:
    board = load_board(args.board) if args.board else None
    measured = sizes.measure(args.files, board)
    table = sizes.format_markdown if args.markdown else sizes.format_table
    sys.stdout.write(table(measured))
    doc = sizes.to_json(measured, board)
    for elf, entry in zip(args.files, doc["files"]):
        if not (args.objects or args.symbols):
            break
        map_text = sizes.read_map(elf)
        if args.objects:
            objects = sizes.by_object(map_text)
            sys.stdout.write(f"\n{elf}, by object file (from {elf.with_suffix('.map').name}):\n\n")
            sys.stdout.write(sizes.format_markdown(objects, "total") if args.markdown else sizes.format_table(objects))
            entry["objects"] = [o.to_json() for o in objects]
        if args.symbols:
            parts = sizes.by_part(map_text)
            sys.stdout.write(f"\n{elf}, the {args.symbols} largest symbols (from {elf.with_suffix('.map').name}):\n\n")
            sys.stdout.write(sizes.format_parts(parts[:args.symbols], args.markdown))
            entry["symbols"] = [p.to_json() for p in parts]
    if args.json:
        _write_json(args.json, doc)
    return 0


# --------------------------------------------------------------------------- profile


def cmd_profile(args: argparse.Namespace) -> int:
    if args.trace:
        if not (args.start and args.end):
            raise UsageError("--trace needs --from FUNCTION and --to FUNCTION")
        w = avrprofile.trace_window(args.elf, args.trace, args.start, args.end, args.occurrence)
        sys.stdout.write(f"cycles {w.start_cycle} -> {w.end_cycle}: {w.cycles}, by function in the order they ran:\n")
        sys.stdout.write(avrprofile.format_counts(w.functions, w.cycles))
        return 0
    if not args.profile:
        raise UsageError("give --profile FILE or --trace FILE")
    counts = avrprofile.profile_by_function(args.elf, args.profile)
    rows = counts.most_common(args.top)
    sys.stdout.write(avrprofile.format_counts(rows, sum(counts.values())))
    return 0


# --------------------------------------------------------------------------- sim


def cmd_sim(args: argparse.Namespace) -> int:
    scen = scenario.load_scenario(args.scenario).with_overrides(seed=args.seed, threads=args.threads,
                                                                duration_s=args.duration)
    out = args.out if args.out is not None else Path("results") / "sim" / scen.stem
    if args.seeds is not None:
        seeds = sim.parse_seeds(args.seeds)
        print(f"tern sim: {len(seeds)} seeds on {executor.describe(args.jobs, args.scheduler, len(seeds))}",
              file=sys.stderr)
        doc = sim.run_seeds(scen, out, seeds, workers=args.jobs, scheduler=args.scheduler)
        sys.stdout.write(sim.seeds_table(doc))
        _write_json(out / "seeds.json", doc)
        print(f"tern sim: {out / 'seeds.json'}, each run in {out / 'seed-N'}", file=sys.stderr)
        return 1 if any(r["crashed"] for r in doc["runs"]) else 0
    result = sim.run(scen, out, do_build=not args.no_build, log=sys.stderr, profile=args.profile)
    sys.stdout.write(sim.format_summary(result))
    for note in result.notes:
        print(f"tern sim: {note}", file=sys.stderr)
    crashed = result.crashed
    if crashed:
        names = ", ".join(n.name + (f" ({n.crash})" if n.crash else "") for n in crashed)
        print(f"tern sim: {len(crashed)} node{'s' if len(crashed) != 1 else ''} crashed: {names}", file=sys.stderr)
        return 1
    return 0


def cmd_bench_sim(args: argparse.Namespace) -> int:
    nodes = simbench.parse_counts(args.nodes, "--nodes")
    threads = simbench.parse_counts(args.threads, "--threads") if args.threads else sorted({1, os.cpu_count() or 1})
    doc = simbench.run_bench(nodes, threads)
    sys.stdout.write(simbench.text_table(doc))
    if args.json:
        _write_json(args.json, doc)
    return 0


def cmd_bench_bips(args: argparse.Namespace) -> int:
    which = ["timers", "sfd", "sync", "macs"] if args.experiment == "all" else [args.experiment]
    failed = 0
    for name in which:
        work = args.work / name
        if name == "timers":
            doc = bipsbench.run_timers(work, count=args.count, model=args.model)
            table = bipsbench.timers_markdown(doc)
            plot = bipsbench.plot_timers
        elif name == "sfd":
            doc = bipsbench.run_sfd(work, frames=args.frames, model=args.model)
            table = bipsbench.sfd_markdown(doc)
            plot = bipsbench.plot_sfd
        elif name == "sync":
            doc = bipsbench.run_sync(work, slots=args.slots, model=args.model)
            table = bipsbench.sync_markdown(doc)
            plot = bipsbench.plot_sync
        else:
            doc = bipsbench.run_macs(work, seconds=args.seconds, model=args.model)
            table = bipsbench.macs_markdown(doc)
            plot = bipsbench.plot_macs
        text = f"```sh\n{doc['command']}\n```\n\n{table}\n{bipsbench.targets_markdown(doc['targets'])}"
        sys.stdout.write(text + "\n")
        bipsbench.write_outputs(doc, args.out, text)
        plot(doc, args.out / f"{name}.png")
        failed += sum(1 for t in doc["targets"] if t["met"] is False)
    print(f"tern bench bips: outputs in {args.out}; {failed} target(s) missed", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- soak


def cmd_soak(args: argparse.Namespace) -> int:
    duration = args.duration if args.duration is not None else soak.DAY_S if args.long else soak.HOUR_S
    out = args.out if args.out is not None else Path("results") / "soak"
    result = soak.run(duration, seed=args.seed, out=out, log=sys.stderr)
    table = soak.text_table(result)
    sys.stdout.write(table)
    _write_json(out / "soak.json", soak.to_json(result))
    (out / "soak.md").write_text(table)
    print(f"tern soak: {out / 'soak.json'}, {out / 'soak.md'}", file=sys.stderr)
    return 0 if result.ok else 1


# --------------------------------------------------------------------------- docs readme


def cmd_docs_readme(args: argparse.Namespace) -> int:
    text = _read_text(str(args.readme))
    filled, done = readme.fill(text, args.docs)
    if not done:
        raise UsageError(f"{args.readme} has no '<!-- generated: KIND BOARD -->' block")
    with _open_out(args.readme) as f:
        f.write(filled)
    for block in done:
        print(f"tern docs readme: {block}")
    return 0


# --------------------------------------------------------------------------- docs timeline


def cmd_docs_timeline(args: argparse.Namespace) -> int:
    if args.input:
        outputs = [(str(path), _read_text(str(path))) for path in args.input]
    else:
        build_dir = args.build_dir if args.build_dir.is_absolute() else repo_root() / args.build_dir
        if not args.no_build:
            timeline.build_demos(build_dir, repo_root())
        outputs = timeline.run_demos(build_dir)
    for path in timeline.generate(timeline.timelines_from_outputs(outputs), args.out, args.img_dir):
        print(path)
    return 0


# --------------------------------------------------------------------------- parser


def _scheduler(text: str) -> str:
    if not text.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")) or text.endswith("://"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Dask scheduler address (tcp://HOST:PORT)")
    return text


def _scheduler_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scheduler", type=_scheduler, metavar="tcp://HOST:PORT",
                   help="run on this existing Dask cluster instead of local workers (--jobs is then ignored; "
                   "the workers need this checkout, built, at the same path: docs/benchmarks.md)")


def build_parser() -> Parser:
    parser = Parser(prog="tern", description="Host tools for the tern kernel.")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)

    run = sub.add_parser("run", help="run an ELF in the emulator of a board",
                         description="Run IMAGE in the board's emulator, stream its console to stdout and exit "
                         "with the guest's status (124 when the wall-time limit is reached).")  # fmt: skip
    run.add_argument("--board", required=True, help="board name (boards/BOARD/board.json) or path to a board.json")
    run.add_argument("--max-cycles", type=_positive_int, metavar="N",
                     help="simavr boards only: stop after N CPU cycles. QEMU cannot stop after N instructions; "
                     "bound QEMU runs with --timeout and the guest's watchdog")  # fmt: skip
    run.add_argument("--timeout", type=_positive_float, default=120.0, metavar="SECONDS",
                     help="wall-time limit (default 120)")  # fmt: skip
    run.add_argument("--trace-out", type=Path, metavar="FILE",
                     help="decode 'T <hex>' trace lines into FILE as JSON lines instead of echoing them")
    run.add_argument("--app", metavar="NAME",
                     help="build apps/NAME for the board (into build/target/BOARD/MODEL) and run it")
    run.add_argument("--model", default="stack", help="execution model for --app (default stack)")
    run.add_argument("image", type=Path, metavar="IMAGE", nargs="?")
    run.set_defaults(func=cmd_run, prog_name="tern run")

    tr = sub.add_parser("trace", help="decode kernel trace records")
    tr_sub = tr.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    dec = tr_sub.add_parser("decode", help="print the events of a console log",
                            description="Decode the 'T <hex>' lines of a console log (or a --trace-out file).")
    dec.add_argument("file", metavar="FILE", help="console log, --trace-out JSON lines, or - for stdin")
    dec.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    dec.add_argument("--view", choices=("events", "jobs", "idle"), default="events",
                     help="raw events (default), derived handler jobs, or idle periods")
    dec.set_defaults(func=cmd_trace_decode, prog_name="tern trace decode")
    ex = tr_sub.add_parser("export", help="write a trace for Perfetto's UI (Chrome trace-event JSON)",
                           description="Turn a kernel trace (a `tern run --trace-out` file or a console log with "
                           "'T <hex>' lines) or a tern-sim output directory (events.jsonl, trace/<node>.jsonl) into "
                           "Chrome trace-event JSON, which https://ui.perfetto.dev and chrome://tracing open "
                           "(docs/traces.md).")  # fmt: skip
    ex.add_argument("--format", choices=("perfetto",), default="perfetto",
                    help="perfetto: Chrome trace-event JSON (the only one)")
    ex.add_argument("--board", help="kernel traces: the board whose ticks the times are (µs of its scenario CPU); "
                    "without it one tick is shown as one µs")  # fmt: skip
    ex.add_argument("--tasks", metavar="ID=NAME,...", help="names for task ids, e.g. 0=control,1=sensing,2=forwarding")
    ex.add_argument("input", type=Path, metavar="IN", help="trace file, console log or tern-sim output directory")
    ex.add_argument("output", type=Path, metavar="OUT.json")
    ex.set_defaults(func=cmd_trace_export, prog_name="tern trace export")
    tr.set_defaults(func=lambda a: _missing_command(tr), prog_name="tern trace")

    bench = sub.add_parser("bench", help="run a benchmark sweep")
    bench_sub = bench.add_subparsers(title="benchmarks", metavar="BENCH", parser_class=Parser)
    s0 = bench_sub.add_parser("seed000", help="TinyOS-vs-MANTIS scenario of seed 000 over models, n and l_s",
                              description="Build bench/seed000 for each model, run every (model, n, l_s) "
                              "configuration and report the seed-000 metrics.")  # fmt: skip
    s0.add_argument("--board", help="board name or path to a board.json")
    s0.add_argument("--models", help="comma-separated (default: every model the board lists)")
    s0.add_argument("--n", default=",".join(map(str, seed000.DEFAULT_N)), help="tree depths (default 1..8)")
    s0.add_argument("--ls", default=",".join(map(str, seed000.DEFAULT_LS_MS)),
                    help="sensing task lengths in ms (default 1,5,10,25,50,75,100)")
    s0.add_argument("--samples", type=_positive_int, default=seed000.DEFAULT_SAMPLES,
                    help=f"1 s sensing periods per run (default {seed000.DEFAULT_SAMPLES})")
    s0.add_argument("--seed", type=int, default=seed000.DEFAULT_SEED, help="arrival PRNG seed (default 1)")
    s0.add_argument("--jobs", type=_positive_int, default=seed000.default_jobs(),
                    help="parallel runs: worker processes of a local Dask cluster; 1 runs serially without Dask "
                    "(default: number of CPUs)")
    _scheduler_flag(s0)
    s0.add_argument("--timeout", type=_positive_float, default=seed000.DEFAULT_TIMEOUT,
                    help=f"wall-time limit per run in seconds (default {seed000.DEFAULT_TIMEOUT:g})")
    s0.add_argument("--no-build", action="store_true", help="use the ELFs already in build/ instead of building")
    s0.add_argument("--logs", type=Path, metavar="DIR", help="keep every run's console output in DIR")
    s0.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    s0.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots into DIR")
    s0.add_argument("--report", type=Path, metavar="FILE.md", help="write a markdown report")
    s0.add_argument("--verdict", action="store_true",
                    help="print only the n = 1, 8 / l_s = 1, 75 ms rows, where the plots are, and a verdict: which "
                    "model wins E_t, sd(E_t), I_o and RAM, by how much, beside the paper's TinyOS and MANTIS")
    s0.add_argument("--from-json", type=Path, metavar="FILE",
                    help="do not run: report on the results of an earlier --json")
    s0.add_argument("--merge", type=Path, metavar="FILE",
                    help="the runs of an earlier --json, with this sweep's (or --from-json's) points put in place of the "
                    "same (model, n, l_s): a document whose runs may differ in length and commit (each run records "
                    "both)")
    s0.add_argument("--issue17", action="store_true",
                    help="also measure issue 17's other ATmega128 targets (apps/ordering's interrupt-to-handler "
                    "latency and seed000_bare's size, stack and fifo) and the floors of bench/floor/avr_floor.c and "
                    "bench/floor/seed000_floor.c, into the JSON's 'issue17' block; works with --from-json")
    s0.set_defaults(func=cmd_bench_seed000, prog_name="tern bench seed000")
    s3 = bench_sub.add_parser("seed003", help="seed 003's high-load node: threads vs adaptive and the others",
                              description="Build bench/seed003 for each model and run it once: a long sensing "
                                          "task and 4 neighbour streams of forwarding jobs on one priority level; "
                                          "voluntary and involuntary context switches, busy time, processing times.")
    s3.add_argument("--board", help="board name or path to a board.json")
    s3.add_argument("--models", default=",".join(seed003.DEFAULT_MODELS),
                    help=f"comma-separated (default {','.join(seed003.DEFAULT_MODELS)})")
    defaults = seed003.Params()
    s3.add_argument("--duration", type=_positive_int, default=defaults.duration_s,
                    help=f"virtual seconds of arrivals (default {defaults.duration_s})")
    s3.add_argument("--ls", type=_positive_int, default=defaults.ls_ms,
                    help=f"sensing job in ms (default {defaults.ls_ms})")
    s3.add_argument("--period", type=_positive_int, default=defaults.period_ms,
                    help=f"sensing period in ms (default {defaults.period_ms})")
    s3.add_argument("--gap", type=_positive_int, default=defaults.gap_cycles,
                    help=f"mean gap between a neighbour's packets in cycles (default {defaults.gap_cycles})")
    s3.add_argument("--lp", type=_positive_int, default=defaults.lp_cycles,
                    help=f"forwarding job in cycles (default {defaults.lp_cycles})")
    s3.add_argument("--neighbours", type=_positive_int, default=defaults.neighbours,
                    help=f"neighbour streams, 1..4 (default {defaults.neighbours})")
    s3.add_argument("--seed", type=int, default=defaults.seed, help="arrival PRNG seed (default 1)")
    s3.add_argument("--timeout", type=_positive_float, default=600.0,
                    help="wall-time limit per run in seconds (default 600)")
    s3.add_argument("--jobs", type=_positive_int, default=seed000.default_jobs(),
                    help="models run in parallel on a local Dask cluster; 1 runs serially without Dask "
                    "(default: number of CPUs)")
    _scheduler_flag(s3)
    s3.add_argument("--logs", type=Path, metavar="DIR", help="keep every run's console output in DIR")
    s3.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    s3.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots into DIR")
    s3.add_argument("--from-json", type=Path, metavar="FILE",
                    help="do not run: report on the results of an earlier --json")
    s3.set_defaults(func=cmd_bench_seed003, prog_name="tern bench seed003")
    s1 = bench_sub.add_parser("seed001", help="seed 001's experiments (net: UDP latency, throughput, loss)",
                              description="Seed 001's experiments on tern-sim (docs/seed001).")
    s1_sub = s1.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    s1n = s1_sub.add_parser("net", help="UDP latency, throughput and loss over 1..5 hops (thesis tables 6.4-6.6)",
                            description="Build bench/seed001 and run it in tern-sim: two nodes 1 m apart, UDP "
                                        "latency (logic analyser pins), throughput (50 kB / 100 kB totals) and "
                                        "loss for 50 and 1,000-byte datagrams over a link with a per-frame "
                                        "loss; then the same over 1..5 hops. Figures in simulated time.")
    s1n.add_argument("--board", default=seed001.DEFAULT_BOARD,
                     help=f"a radio board (default {seed001.DEFAULT_BOARD}: 1,000-byte datagrams need its RAM)")
    s1n.add_argument("--loss", type=float, default=seed001.THESIS_P,
                     help=f"per-frame loss p of every hop (default {seed001.THESIS_P}, the thesis's)")
    s1n.add_argument("--latency-samples", type=_positive_int, default=100, help="datagrams per latency run (100)")
    s1n.add_argument("--throughput-samples", type=_positive_int, default=20,
                     help="throughput intervals per size (20, the thesis's n)")
    s1n.add_argument("--hops", default=None,
                     help="hop counts for experiment 6 ('' for none; default 1,2,3,4,5 with --link csma, none else)")
    s1n.add_argument("--link", choices=tuple(seed001.LINKS), default="csma",
                     help="csma: plain CSMA on the driver; cb, rb: BiPS's multiplexer with a CB or an RB "
                          "region (one hop)")
    s1n.add_argument("--hop-latency-samples", type=_positive_int, default=20)
    s1n.add_argument("--hop-throughput-samples", type=_positive_int, default=3)
    s1n.add_argument("--seed", type=int, default=1, help="the simulation's seed (frame losses)")
    s1n.add_argument("--work", type=Path, default=Path("results/seed001"), help="run directories (results/seed001)")
    s1n.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    s1n.add_argument("--markdown", type=Path, metavar="FILE", help="write the tables as markdown")
    s1n.add_argument("--plots", type=Path, metavar="DIR", help="write PNG box plots into DIR")
    s1n.add_argument("--from-json", type=Path, metavar="FILE",
                     help="do not run: report on the results of an earlier --json")
    s1n.set_defaults(func=cmd_bench_seed001_net, prog_name="tern bench seed001 net")
    helps = {"gpio": "GPIO toggle frequency, on/off times, input-to-output delay per model (thesis table 6.1)",
             "irq": "interrupt latency (pin edge to the handler's first statement) and its jitter per model",
             "memory": "text/data/bss of the GPIO and network apps per model (thesis table 6.2)",
             "power": "tern-sim's power of the GPIO app and the network app's receiver per model (thesis table 6.3)"}
    for name in seed001_gpio.EXPERIMENTS:
        sx = s1_sub.add_parser(name, help=helps[name],
                               description=f"Seed 001 on tern-sim, {helps[name]}; bench/seed001/gpio.c on a MicaZ "
                                           "(simulated cycles at 7.3728 MHz), beside Zephyr, RIOT and Contiki.")
        sx.add_argument("--board", default=seed001_gpio.BOARD, help=f"(default {seed001_gpio.BOARD}, the only one)")
        sx.add_argument("--models", help="comma-separated (default: every model the board lists)")
        sx.add_argument("--toggles", type=_positive_int, default=200, help="toggles per loop (gpio; 200)")
        sx.add_argument("--edges", type=_positive_int, default=200, help="input edges per run (gpio, irq; 200)")
        sx.add_argument("--power-edges", type=_positive_int, default=1000,
                        help="edges, one a ms, of the GPIO app's power run (power; 1000)")
        sx.add_argument("--net-datagrams", type=_positive_int, default=400,
                        help="50-byte datagrams of the network app's power run (power; 400)")
        sx.add_argument("--seed", type=int, default=1, help="the simulation's seed (Poisson edges)")
        sx.add_argument("--work", type=Path, default=Path("results/seed001-" + name), help="run directories")
        sx.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
        sx.add_argument("--markdown", type=Path, metavar="FILE", help="write the tables as markdown")
        sx.add_argument("--plots", type=Path, metavar="DIR", help="write PNG box plots into DIR (irq)")
        sx.add_argument("--from-json", type=Path, metavar="FILE",
                        help="do not run: report on the results of an earlier --json")
        sx.set_defaults(func=cmd_bench_seed001_gpio, prog_name=f"tern bench seed001 {name}")
    mi = bench_sub.add_parser("micro", help="kernel microbenchmarks: timer delays, interrupt latency, round trips, footprint",
                              description="Build bench/micro for every model the board lists, run it, and report "
                                          "min/avg/max per benchmark (instructions on QEMU boards, cycles on AVR) "
                                          "and the kernel's footprint (bytes).")
    mi.add_argument("--board", help="board name or path to a board.json")
    mi.add_argument("--models", help="comma-separated (default: every model the board lists)")
    mi.add_argument("--count", type=_positive_int, default=micro.DEFAULT_COUNT,
                    help=f"samples per benchmark (default {micro.DEFAULT_COUNT})")
    mi.add_argument("--jobs", type=_positive_int, default=seed000.default_jobs(),
                    help="models run in parallel on a local Dask cluster; 1 runs serially without Dask "
                    "(default: number of CPUs)")
    _scheduler_flag(mi)
    mi.add_argument("--timeout", type=_positive_float, default=micro.DEFAULT_TIMEOUT,
                    help=f"wall-time limit per model in seconds (default {micro.DEFAULT_TIMEOUT:g})")
    mi.add_argument("--no-build", action="store_true", help="use the ELFs already in build/ instead of building")
    mi.add_argument("--json", type=Path, metavar="FILE", help="write the results as JSON")
    mi.add_argument("--doc", type=Path, metavar="FILE.md", help="write the markdown tables (docs/benchmarks.md)")
    mi.add_argument("--from-json", type=Path, metavar="FILE", nargs="+",
                    help="do not run: report on the results of earlier --json runs (one per board)")
    mi.set_defaults(func=cmd_bench_micro, prog_name="tern bench micro")
    bench.set_defaults(func=lambda a: _missing_command(bench), prog_name="tern bench")

    it = bench_sub.add_parser("itrace", help="where a microbenchmark's instructions go, by function (QEMU boards)",
                              description="Run bench/micro under QEMU with every instruction logged and charge "
                                          "each sample's instructions to the (inlined) function they come from.")
    it.add_argument("--board", default="mps2-an385", help="board name or path to a board.json")
    it.add_argument("--models", default="stack", help="comma-separated models")
    it.add_argument("--benchmarks", default=",".join(itrace.WINDOWS),
                    help=f"comma-separated, of {', '.join(itrace.WINDOWS)}")
    it.add_argument("--samples", type=_positive_int, default=12, help="samples per benchmark (default 12)")
    it.add_argument("--doc", type=Path, metavar="FILE.md", help="write the markdown tables here")
    it.set_defaults(func=cmd_bench_itrace, prog_name="tern bench itrace")
    sb = bench_sub.add_parser("sim", help="tern-sim's speed: node-seconds per wall second for 1 to 10,000 MicaZ nodes",
                              description="Run networks of sleeping MicaZ nodes (bench/sim/beacon.c, one 30-byte frame "
                              "a second each) in tern-sim on one host thread and on all, and print simulated "
                              "node-seconds per wall-clock second. Wall time depends on the machine: a benchmark, "
                              "not a test.")  # fmt: skip
    sb.add_argument("--nodes", default=",".join(str(n) for n in simbench.DEFAULT_NODES),
                    help="comma-separated node counts (default %(default)s)")
    sb.add_argument("--threads", help="comma-separated host thread counts (default: 1 and all the machine's)")
    sb.add_argument("--json", type=Path, help="write the results as JSON")
    sb.set_defaults(func=cmd_bench_sim, prog_name="tern bench sim")

    bp = bench_sub.add_parser("bips", help="seed 004's experiments on micaz: timer delays, SFD detection, sync offset, "
                              "MAC comparison",
                              description="Run issue 11's experiments 1-4 under tern-sim (bench/bips/, "
                              "tools/terntools/bipsbench.py, docs/bips.md) and write JSON, a markdown table and a "
                              "PNG plot per experiment into --out.")  # fmt: skip
    bp.add_argument("experiment", choices=["timers", "sfd", "sync", "macs", "all"])
    bp.add_argument("--count", type=int, default=10_000, help="timers: expirations per timer and load (default %(default)s)")
    bp.add_argument("--frames", type=int, default=1500, help="sfd: frames (default %(default)s)")
    bp.add_argument("--slots", type=int, default=100, help="sync: macro slots (default %(default)s)")
    bp.add_argument("--seconds", type=int, default=20, help="macs: seconds of traffic per run (default %(default)s)")
    bp.add_argument("--model", default="stack", help="execution model of the images (default %(default)s)")
    bp.add_argument("--out", type=Path, default=Path("docs/bips"), help="results directory (default %(default)s)")
    bp.add_argument("--work", type=Path, default=Path("results/bips"),
                    help="tern-sim's outputs (default %(default)s)")
    bp.set_defaults(func=cmd_bench_bips, prog_name="tern bench bips")

    comos.register(bench_sub, Parser, _missing_command)

    sz = sub.add_parser("size", help="flash and RAM footprint of ELF images and objects",
                        description="text/data/bss per file (binutils size -B), flash = text+data, ram = data+bss.")
    sz.add_argument("--board", help="use the board's toolchain size (default: the host's size)")
    sz.add_argument("--json", type=Path, metavar="FILE", help="write the sizes as JSON")
    sz.add_argument("--objects", action="store_true",
                    help="also break each image down by object file, from the link map beside it")
    sz.add_argument("--symbols", type=int, default=0, metavar="N",
                    help="also list each image's N largest functions and variables with their object file, "
                         "from the link map (the JSON has all of them)")
    sz.add_argument("--markdown", action="store_true", help="print the tables as markdown (for docs/)")
    sz.add_argument("files", type=Path, nargs="+", metavar="ELF")
    sz.set_defaults(func=cmd_size, prog_name="tern size")

    pr = sub.add_parser("profile", help="cycles by function of a tern-simavr --profile or --trace (AVR)",
                        description="Map tern-simavr's --profile FILE (a whole run) or --trace FILE (one path: "
                        "from an entry into --from FUNCTION to the next entry into --to FUNCTION) to the functions "
                        "of ELF, in cycles.")  # fmt: skip
    pr.add_argument("elf", type=Path, metavar="ELF")
    pr.add_argument("--profile", type=Path, metavar="FILE", help="tern-simavr --profile output")
    pr.add_argument("--trace", type=Path, metavar="FILE", help="tern-simavr --trace output")
    pr.add_argument("--from", dest="start", metavar="FUNCTION", help="the path starts at an entry into it")
    pr.add_argument("--to", dest="end", metavar="FUNCTION", help="... and ends at the next entry into this one")
    pr.add_argument("--occurrence", type=int, default=-1, metavar="K",
                    help="which path (0 the first, -1 the last; default -1)")
    pr.add_argument("--top", type=_positive_int, default=40, metavar="N",
                    help="functions listed for --profile (default 40)")
    pr.set_defaults(func=cmd_profile, prog_name="tern profile")

    sm = sub.add_parser("sim", help="simulate a network of AVR nodes (tern-sim) from a scenario file",
                        description="Validate SCENARIO.toml (docs/tern-sim.md, 'Scenario file'), build the apps its "
                        "nodes run, run tern-sim and print a summary per node. Exit 0 when the run completed, "
                        "1 when a node crashed, 2 for a bad scenario.")  # fmt: skip
    sm.add_argument("scenario", type=Path, metavar="SCENARIO.toml")
    sm.add_argument("--out", type=Path, metavar="DIR",
                    help="output directory (default results/sim/<scenario name>)")
    sm.add_argument("--threads", type=_positive_int, metavar="N", help="host threads (default: the scenario's)")
    sm.add_argument("--seed", type=int, metavar="N", help="random seed (default: the scenario's)")
    sm.add_argument("--duration", type=float, metavar="SECONDS", help="simulated time (default: the scenario's)")
    sm.add_argument("--seeds", metavar="LIST", help="run once per seed (e.g. 1-8 or 3,7,11), each in OUT/seed-N, "
                    "on a local Dask cluster of --jobs workers or on --scheduler; a table per seed and OUT/seeds.json")
    sm.add_argument("--jobs", type=_positive_int, default=seed000.default_jobs(), metavar="N",
                    help="local workers for --seeds (default: the CPUs)")
    _scheduler_flag(sm)
    sm.add_argument("--no-build", action="store_true", help="use the ELFs already in build/ instead of building")
    sm.add_argument("--profile", action="store_true", help="also write OUT/profile/<node>.txt, the cycles at each "
                    "instruction address of each node (tern profile ELF --profile FILE maps them to functions)")
    sm.set_defaults(func=cmd_sim, prog_name="tern sim")

    so = sub.add_parser("soak", help="the soak of docs/reliability.md: 20 nodes of mixed UDP traffic for a "
                        "simulated hour, then every node's balance",
                        description="Run docs/sim/soak.toml (apps/soak: every node a UDP client and echo server, "
                        "multi-hop) for a simulated hour, or a day with --long, and check that every node kept "
                        "reporting, returned its heap, dispatched every message and accounted for every request, "
                        "and that no datagram was lost without a counter. Writes soak.json and soak.md to the "
                        "output directory. Exit 0 when everything balances, 1 when not.")  # fmt: skip
    so.add_argument("--long", action="store_true", help="a simulated day instead of an hour")
    so.add_argument("--duration", type=float, metavar="SECONDS", help="any other simulated time (at least 10)")
    so.add_argument("--seed", type=int, metavar="N", help="random seed (default: the scenario's)")
    so.add_argument("--out", type=Path, metavar="DIR", help="output directory (default results/soak)")
    so.set_defaults(func=cmd_soak, prog_name="tern soak")

    docs = sub.add_parser("docs", help="regenerate generated documentation")
    docs_sub = docs.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    tl = docs_sub.add_parser("timeline", help="docs/execution-models.md from the timeline demo",
                             description="Build and run tests/unit/timeline_demo_<model> for fifo, priority and "
                             "stack, and write the execution-models document with its timelines and PNGs.")  # fmt: skip
    tl.add_argument("--build-dir", type=Path, default=Path("build/host"),
                    help="host build tree (default build/host, relative to the repository)")
    tl.add_argument("--no-build", action="store_true", help="run the demo binaries already built")
    tl.add_argument("--input", type=Path, action="append", metavar="FILE",
                    help="use a saved demo output (with its MODEL line) instead of running; give one per model")
    tl.add_argument("--out", type=Path, default=repo_root() / "docs" / "execution-models.md", metavar="FILE.md",
                    help="document to write (default docs/execution-models.md)")
    tl.add_argument("--img-dir", type=Path, metavar="DIR", help="where the PNGs go (default: img/ beside --out)")
    tl.set_defaults(func=cmd_docs_timeline, prog_name="tern docs timeline")
    rd = docs_sub.add_parser("readme", help="README.md's result tables from the JSON in docs/",
                             description="Rewrite every '<!-- generated: KIND BOARD -->' block of the README from "
                             "docs/KIND/BOARD.json (KIND: seed000, seed003, micro).")  # fmt: skip
    rd.add_argument("--readme", type=Path, default=repo_root() / "README.md", metavar="FILE.md",
                    help="the file to rewrite (default README.md)")
    rd.add_argument("--docs", type=Path, default=repo_root() / "docs", metavar="DIR",
                    help="where the JSON results are (default docs/)")
    rd.set_defaults(func=cmd_docs_readme, prog_name="tern docs readme")
    docs.set_defaults(func=lambda a: _missing_command(docs), prog_name="tern docs")

    parser.set_defaults(func=lambda a: _missing_command(parser), prog_name="tern")
    return parser


def _missing_command(parser: Parser) -> int:
    """A command group given without its command, e.g. plain `tern bench`."""
    sys.stderr.write(f"{parser.prog}: a command is required (see {parser.prog} --help)\n")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except TernError as exc:
        print(f"{args.prog_name}: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"{args.prog_name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `tern trace decode log | head`
        return 0
