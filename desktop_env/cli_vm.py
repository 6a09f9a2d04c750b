"""``desktop-env vm``: start, inspect, drive and snapshot a VM by hand (for debugging tasks)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path


def _provider(args):
    from desktop_env.errors import VMError
    from desktop_env.providers.qemu.provider import QemuProvider

    if not getattr(args, "name", None):
        running = _running_ids(args.cache_dir)
        if len(running) != 1:
            raise VMError("name the VM (--vm NAME or NAME): " +
                          (f"running VMs: {', '.join(running)}" if running else "no VM is running; "
                           "start one with: desktop-env vm start"))
        args.name = running[0]
    return QemuProvider.attach(args.name, args.cache_dir)


def _running_ids(cache_dir) -> list[str]:
    from desktop_env.providers.qemu.provider import vms_dir

    return sorted(d.name for d in vms_dir(cache_dir).iterdir() if d.is_dir())


def cmd_start(args) -> int:
    from desktop_env.providers.qemu.provider import QemuProvider

    vm = QemuProvider(image=args.image, cache_dir=args.cache_dir, accel=args.accel, detached=True,
                      vm_id=args.name, allow_internet=args.allow_internet)
    vm.start()
    if args.state:
        from desktop_env.envs.warm import ensure_state
        from desktop_env.image.states import current_state, recipe_for

        try:
            if current_state(vm.image, recipe_for(vm.image, args.state)) is None:
                print(f"warm state {args.state} is not built yet: building it (minutes under emulation)", flush=True)
            vm.restore_state(ensure_state(vm, args.state))
        except BaseException:
            vm.stop()
            raise
    status = vm.status()
    vm.detach()
    print(f"started VM {vm.vm_id} from image {vm.image.name} at {vm.state_name}")
    _print_status(status)
    print(f"\nnext: desktop-env vm vnc {vm.vm_id}   |   desktop-env vm shell {vm.vm_id}   |   "
          f"desktop-env vm stop {vm.vm_id}")
    return 0


def _print_status(status: dict) -> None:
    for key in ("vm_id", "image", "state", "running", "pid", "accel", "server", "cdp_port", "vnc_port", "detached",
                "snapshots", "dir"):
        if key in status:
            print(f"  {key:<10} {status[key]}")


def cmd_stop(args) -> int:
    from desktop_env.errors import VMError
    from desktop_env.providers.qemu.provider import _kill_qemu, vms_dir

    names = _running_ids(args.cache_dir) if args.all else [args.name]
    for name in names:
        vm_dir = vms_dir(args.cache_dir) / name
        if not vm_dir.exists():
            raise VMError(f"no VM {name!r} (running VMs: {', '.join(_running_ids(args.cache_dir)) or 'none'})")
        _stop_vnc(vm_dir)
        _kill_qemu(vm_dir)
        from desktop_env.paths import cache_dir

        logs = cache_dir(args.cache_dir) / "logs" / "vms" / name
        logs.mkdir(parents=True, exist_ok=True)
        for log_name in ("qemu.log", "console.log", "websockify.log"):
            if (vm_dir / log_name).exists():
                shutil.move(str(vm_dir / log_name), logs / log_name)
        shutil.rmtree(vm_dir, ignore_errors=True)
        print(f"stopped {name}")
    return 0


def cmd_status(args) -> int:
    from desktop_env.errors import DesktopEnvError

    names = [args.name] if args.name else _running_ids(args.cache_dir)
    if not names:
        print("no VMs; start one with: desktop-env vm start")
        return 0
    for name in names:
        try:
            vm = _provider(argparse_ns(args, name=name))
            status = vm.status()
            vm.detach() if vm.detached else vm.machine._close_qmp()
        except DesktopEnvError as exc:
            # A VM that run.py or a script drives holds its QMP socket (one client at a time):
            # report it and go on with the others.
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if args.json:
                print(json.dumps({"vm_id": name, "reachable": False, "error": first}))
            else:
                print(f"{name}\n  reachable  False (in use by another process, or not answering: {first})")
            continue
        if args.json:
            print(json.dumps(status))
        else:
            print(name)
            _print_status(status)
    return 0


def argparse_ns(args, **changes):
    import argparse

    data = dict(vars(args))
    data.update(changes)
    return argparse.Namespace(**data)


def cmd_screenshot(args) -> int:
    vm = _provider(args)
    try:
        data = vm.screenshot()
    finally:
        vm.machine._close_qmp()
    Path(args.file).write_bytes(data)
    print(f"wrote {args.file} ({len(data)} bytes, host-side screendump)")
    return 0


def cmd_shell(args) -> int:
    """A line-by-line shell in the guest (as user 'user'), through the in-VM server."""
    from desktop_env.controllers.python import PythonController
    from desktop_env.errors import GuestServerError

    vm = _provider(args)
    vm.machine._close_qmp()
    guest = PythonController(vm.server.host, vm.server.port, token=vm.token)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if command:
        reply = guest.execute(" ".join(command), shell=True, timeout_s=args.timeout)
        sys.stdout.write(reply.get("output", ""))
        sys.stderr.write(reply.get("error", ""))
        return int(reply.get("returncode") or 0)
    print(f"guest shell on {args.name} (commands run as 'user' with a {args.timeout:g} s limit; Ctrl-D to leave)")
    while True:
        try:
            line = input("guest$ ")
        except EOFError:
            print()
            return 0
        if not line.strip():
            continue
        try:
            reply = guest.execute(line, shell=True, timeout_s=args.timeout)
        except GuestServerError as exc:
            print(f"error: {exc}")
            continue
        sys.stdout.write(reply.get("output", ""))
        sys.stdout.write(reply.get("error", ""))
        if reply.get("returncode"):
            print(f"[exit {reply['returncode']}]")


def _stop_vnc(vm_dir: Path) -> None:
    pid_file = vm_dir / "websockify.pid"
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass


def cmd_vnc(args) -> int:
    """Serve noVNC from the host (websockify) and print its URL."""
    import socket

    from desktop_env.errors import HostToolMissing

    vm = _provider(args)
    vm.machine._close_qmp()
    websockify = shutil.which("websockify")
    web = Path("/usr/share/novnc")
    if not websockify or not web.exists():
        raise HostToolMissing("websockify" if not websockify else "/usr/share/novnc",
                              "websockify novnc", "serve the VM's screen in a browser")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = vm.dir / "websockify.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([websockify, "--web", str(web), f"127.0.0.1:{port}", f"127.0.0.1:{vm.vnc.port}"],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    (vm.dir / "websockify.pid").write_text(str(proc.pid))
    url = f"http://127.0.0.1:{port}/vnc.html?host=127.0.0.1&port={port}&autoconnect=1&resize=scale"
    print(f"noVNC for {args.name}: {url}")
    print(f"(raw VNC: 127.0.0.1:{vm.vnc.port}; websockify pid {proc.pid} stops with `desktop-env vm stop`)")
    if args.open:
        import webbrowser
        webbrowser.open(url)
    return 0


def cmd_snapshot(args) -> int:
    from desktop_env.errors import SnapshotError

    if args.action in ("save", "delete") and not args.snapshot:
        raise SnapshotError(f"vm snapshot {args.action} needs a snapshot name")
    args.snapshot = args.snapshot or "init_state"
    vm = _provider(args)
    try:
        if args.action == "list":
            for name in vm.list_snapshots():
                print(name)
        elif args.action == "save":
            vm.save_snapshot(args.snapshot)
            print(f"saved snapshot {args.snapshot}")
        elif args.action == "revert":
            secs = vm.revert_to_snapshot(args.snapshot)
            print(f"reverted to {args.snapshot} in {secs:.2f} s")
        elif args.action == "delete":
            vm.delete_snapshot(args.snapshot)
            print(f"deleted snapshot {args.snapshot}")
    finally:
        vm.detach()
    return 0


def register(subparsers) -> None:
    """Add the ``vm`` command to the top-level parser."""
    import argparse

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", type=Path, default=None, help="cache directory")
    vm = subparsers.add_parser("vm", help="start and drive a VM by hand")
    sub = vm.add_subparsers(dest="vm_command", required=True)

    p = sub.add_parser("start", parents=[common],
                       help="start a VM from an image's init_state (or a warm state) and leave it running")
    p.add_argument("--path_to_vm", "--image", dest="image", default="base",
                   help="image name, profile or folder (default: newest base image)")
    p.add_argument("--name", default=None, help="VM name (default: <profile>-<random>)")
    p.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    p.add_argument("--allow-internet", action="store_true", help="let the guest open outbound connections")
    p.add_argument("--state", default=None,
                   help="start at this warm state of the image (e.g. superset; built first if needed)")
    p.set_defaults(func=cmd_start)

    p = sub.add_parser("stop", parents=[common], help="stop a VM and delete its overlay")
    p.add_argument("--vm", dest="name", help="VM name")
    p.add_argument("name_positional", nargs="?", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--all", action="store_true", help="stop every VM")
    p.set_defaults(func=lambda a: cmd_stop(a) if (a.name or a.all) else vm.error("stop needs --vm NAME or --all"))

    p = sub.add_parser("status", parents=[common], help="show running VMs")
    p.add_argument("--vm", dest="name", help="only this VM")
    p.add_argument("name_positional", nargs="?", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("shell", parents=[common], help="run commands in the guest as 'user'")
    p.add_argument("--vm", dest="name", help="VM name (default: the only running VM)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="one command to run (default: interactive)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per command (default 120)")
    p.set_defaults(func=cmd_shell)

    p = sub.add_parser("vnc", parents=[common], help="serve noVNC for a VM and print its URL")
    p.add_argument("--vm", dest="name", help="VM name (default: the only running VM)")
    p.add_argument("name_positional", nargs="?", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--open", action="store_true", help="open the URL in a browser")
    p.set_defaults(func=cmd_vnc)

    p = sub.add_parser("screenshot", parents=[common], help="save a host-side screenshot (PNG)")
    p.add_argument("file")
    p.add_argument("--vm", dest="name", help="VM name (default: the only running VM)")
    p.set_defaults(func=cmd_screenshot)

    p = sub.add_parser("snapshot", parents=[common], help="list, save, revert or delete snapshots")
    p.add_argument("action", choices=["list", "save", "revert", "delete"])
    p.add_argument("snapshot", nargs="?", default=None, help="snapshot name (revert defaults to init_state)")
    p.add_argument("--vm", dest="name", help="VM name (default: the only running VM)")
    p.set_defaults(func=cmd_snapshot)
