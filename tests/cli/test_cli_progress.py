"""Progress shows on a terminal (a pseudo-terminal here) and not in a pipe; without
rich, a terminal gets plain phase lines and tables stay aligned text."""

import os
import pty
import sys

PLAIN = "import sys; sys.modules['rich'] = None; from relayir.cli import main; " \
        "sys.exit(main(sys.argv[1:]))"


def _on_terminal(argv: list[str], cwd) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal; its status and output."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once
        os.chdir(cwd)
        os.environ["TERM"] = "xterm"
        os.environ.pop("NO_COLOR", None)
        os.execv(sys.executable, [sys.executable, *argv])
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal(mlp_relay, tmp_path):
    rc, out = _on_terminal(["-m", "relayir.cli", "compile", str(mlp_relay), "-o",
                            str(tmp_path / "m.relayir")], tmp_path)
    assert rc == 0, out
    assert f"importing {mlp_relay}: done in" in out
    assert "compiling (graph, cpu, opt level 3): done in" in out and "wrote " in out


def test_no_progress_in_a_pipe(cli, mlp_relay, tmp_path):
    r = cli("compile", mlp_relay, "-o", tmp_path / "m.relayir")
    assert r.rc == 0
    assert r.err == ""
    assert r.out.startswith("wrote ")


def test_verbose_in_a_pipe_prints_phases_and_passes(cli, mlp_relay, tmp_path):
    r = cli("compile", mlp_relay, "-o", tmp_path / "m.relayir", "--verbose")
    assert r.rc == 0
    assert f"importing {mlp_relay}: done in" in r.err
    assert "pass FuseOps" in r.err and "pass FoldConstant" in r.err
    # kernel compilation: lowered and compiled, then served by the lowered-C cache
    assert "kernels compiled" in r.err or "lowered C from the cache" in r.err
    again = cli("compile", mlp_relay, "-o", tmp_path / "m2.relayir", "--verbose")
    assert again.rc == 0 and "kernels: lowered C from the cache" in again.err


def test_plain_text_without_rich(mlp_relay, tmp_path):
    rc, out = _on_terminal(["-c", PLAIN, "run", str(mlp_relay), "--profile"], tmp_path)
    assert rc == 0, out
    assert f"importing {mlp_relay} ..." in out  # a phase line, no spinner
    lines = out.splitlines()
    header = next(line for line in lines if line.split()[:2] == ["kernel", "calls"])
    assert header.split() == ["kernel", "calls", "total", "(ms)", "mean", "(us)", "%"]
