"""The ``desktop-env`` command line: images, VMs and task checks."""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from desktop_env.cli_flags import add_version_flag, merge_positional_name, underscore_flags
from desktop_env.errors import DesktopEnvError, PrivilegeError
from desktop_env.image.store import human_size as _human


class _PhaseFormatter(logging.Formatter):
    """Prefixes each record with the time since the command started."""

    def __init__(self):
        super().__init__()
        self.start = time.monotonic()

    def format(self, record):
        elapsed = time.monotonic() - self.start
        return f"[{int(elapsed // 60):02d}:{int(elapsed % 60):02d}] {record.getMessage()}"


def _setup_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PhaseFormatter())
    root = logging.getLogger("desktop_env")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


# -- image ---------------------------------------------------------------------------
def _build_through_sudo(args) -> int:
    """Run this same ``image build`` as root through sudo, keeping the caller's cache and Python path.

    Raises:
        PrivilegeError: sudo is not installed (the message says what needs root).
    """
    from desktop_env.paths import CACHE_ENV, cache_dir, repo_root

    sudo = shutil.which("sudo")
    if sudo is None:
        raise PrivilegeError("building an image needs root (mmdebstrap in root mode, chroot, and file ownership "
                             "in the guest filesystem) and sudo is not installed: run it as root")
    env = [f"{CACHE_ENV}={cache_dir(args.cache_dir)}",
           "PYTHONPATH=" + os.pathsep.join([str(repo_root())] + [p for p in sys.path if p and Path(p).is_dir()]),
           "PATH=" + os.pathsep.join(dict.fromkeys(  # root's tools (mkfs.ext4) live in sbin, off a user's PATH
               [p for p in os.environ.get("PATH", "").split(os.pathsep) if p] + ["/usr/local/sbin", "/usr/sbin", "/sbin"]))]
    print("building an image needs root: running it through sudo (the image stays in your cache, owned by you)",
          file=sys.stderr, flush=True)
    return subprocess.call([sudo, "env", *env, sys.executable, "-m", "desktop_env", *args.argv])


def cmd_image_build(args) -> int:
    from desktop_env.image.builder import BuildOptions, ImageBuilder

    builder = ImageBuilder(BuildOptions(
        profile=args.profile, cache_dir=args.cache_dir, mirror=args.mirror, suite=args.suite,
        screen=args.screen, auth=not args.no_auth, accel=args.accel, verbose=getattr(args, "verbose", False), force=args.force,
        keep_old=args.keep_old))
    try:
        result = builder.build()
    except PrivilegeError:
        if os.geteuid() == 0:
            raise
        return _build_through_sudo(args)  # an up-to-date image needed no root; building one does
    image = result.image
    if result.reused:
        print(f"{image.name}: up to date ({image.path}) [{result.total_s:.1f} s]")
        return 0
    print(f"\nbuilt {image.name} in {result.total_s:.0f} s -> {image.path}")
    for phase, secs in result.phases.items():
        print(f"  {phase:<12} {secs:7.1f} s")
    print(f"  size on disk: {_human(image.disk_usage())} "
          f"(disk.qcow2 {_human(image.file('disk').stat().st_size)}, "
          f"ready state {_human(_state_bytes(image))})")
    return 0


def _state_bytes(image) -> int:
    """Bytes the ready state occupies on disk: its stream, and its RAM file's allocated blocks when mapped."""
    from desktop_env.paths import allocated

    saved = image.saved_state()
    return saved.stream.stat().st_size + (allocated(saved.ram) if saved.mapped else 0)


def cmd_image_list(args) -> int:
    from desktop_env.image.store import images_dir, list_images

    images = list_images(args.cache_dir)
    if args.json:
        print(json.dumps([{k: v for k, v in i.meta.items() if k != "manifest"}
                          | {"path": str(i.path), "states": _state_rows(i)} for i in images], indent=1))
        return 0
    if not images:
        print(f"no images in {images_dir(args.cache_dir)}; build one with: desktop-env image build --profile base")
        return 0
    print(f"{'NAME':<24} {'PROFILE':<8} {'SCREEN':<10} {'AUTH':<5} {'SIZE':>10}  CREATED")
    for i in images:
        print(f"{i.name:<24} {i.profile:<8} {i.meta['screen']:<10} {str(i.meta['auth']).lower():<5} "
              f"{_human(i.disk_usage()):>10}  {i.meta['created']}")
        for line in _state_lines(i):
            print(line)
    return 0


def cmd_image_fit(args) -> int:
    from desktop_env.image.capacity import capacity
    from desktop_env.image.current import resolve

    image = resolve(args.image or args.profile, args.cache_dir)
    fit = capacity(image, ["init_state", *(args.state or [])], restore=args.restore)
    if args.ray_resources:
        from desktop_env.distributed.pool import SLOT_RESOURCE

        print(json.dumps({SLOT_RESOURCE: fit.fits}))
        return 0
    print(fit.explain())
    return 0


def _state_rows(image) -> list[dict]:
    """Every warm state an image's profile declares: built (current or stale) or not."""
    from desktop_env.image.states import load_state, state_recipes

    rows = []
    for name, recipe in sorted(state_recipes(image.profile).items()):
        state = load_state(image, name)
        row = {"name": name, "built": state is not None, "description": recipe.description}
        if state is not None:
            row.update(current=state.is_current(recipe), created=state.meta.get("created"),
                       build_s=state.meta.get("build_s"), ram_bytes=state.sizes()["ram"],
                       disk_layer_bytes=state.sizes()["disk"], settled=state.meta.get("settled"))
        rows.append(row)
    return rows


def _state_lines(image) -> list[str]:
    out = []
    rows = _state_rows(image)
    width = max([10, *(len(row["name"]) for row in rows)])
    for row in rows:
        if not row["built"]:
            out.append(f"    state {row['name']:<{width}} not built (built on first use, or: desktop-env image warm "
                       f"--path_to_vm {image.name} --state {row['name']})")
            continue
        flag = "" if row["current"] else "  STALE: its recipe or image changed; rebuilt on next use"
        out.append(f"    state {row['name']:<{width}} RAM {_human(row['ram_bytes']):>10}  disk layer "
                   f"{_human(row['disk_layer_bytes']):>10}  built in {row['build_s']:.0f} s  {row['created']}{flag}")
    return out


def cmd_image_warm(args) -> int:
    from desktop_env.envs.warm import build_missing_states
    from desktop_env.image.states import recipe_for, remove_state, state_recipes
    from desktop_env.image.current import resolve

    image = resolve(args.image or args.profile, args.cache_dir)
    names = args.state or sorted(state_recipes(image.profile))
    for name in names:
        recipe_for(image, name)  # an unknown name fails before anything starts, listing the known ones
    if args.remove:
        for name in names:
            print(f"{name}: {'removed' if remove_state(image, name) else 'was not built'}")
        return 0
    built = build_missing_states(image, names, lambda line: print(line, flush=True), force=args.force,
                                 cache_dir=args.cache_dir, accel=args.accel)
    for name, row in built.items():
        if row["reused"]:
            print(f"{name}: up to date")
    for line in _state_lines(image):
        print(line)
    return 0


def cmd_image_lock(args) -> int:
    from desktop_env.image import wheels
    from desktop_env.image.recipe import Recipe

    recipe = Recipe.load(args.profile)
    lock = wheels.lock_venvs({v.name: v.requirements for v in recipe.layer_venvs}, recipe.python_version,
                            no_deps={v.name for v in recipe.layer_venvs if v.no_deps})
    if recipe.node_apps:
        from desktop_env.image import node_apps
        from desktop_env.paths import cache_dir

        lock["node_apps"] = node_apps.lock_entries(recipe.node_apps, cache_dir(None))
    recipe.lock_path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    for name, entry in lock["venvs"].items():
        print(f"  {name}: {len(entry['pins'])} packages")
    for name, entry in lock.get("node_apps", {}).items():
        print(f"  {name} (Node.js {entry['spec']['node']}): {len(entry['package_lock']['packages']) - 1} npm packages")
    print(f"wrote {recipe.lock_path}")
    return 0


def cmd_image_export(args) -> int:
    from desktop_env.image.store import export_image

    out = export_image(args.image, Path(args.archive), args.cache_dir)
    print(f"wrote {out} and {out.name}.sha256")
    return 0


def cmd_image_import(args) -> int:
    from desktop_env.image.store import import_image

    image = import_image(Path(args.archive), args.cache_dir)
    print(f"imported {image.name} -> {image.path}")
    return 0


def cmd_image_rm(args) -> int:
    from desktop_env.image.store import remove_image

    for ref in args.images:
        print(f"removed {remove_image(ref, args.cache_dir)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``desktop-env``."""
    parser = argparse.ArgumentParser(prog="desktop-env", description=__doc__)
    add_version_flag(parser)
    parser.add_argument("--verbose", "-v", action="store_true", help="debug logging; stream tool output")
    sub = parser.add_subparsers(dest="command", required=True)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", type=Path, default=None,
                        help="cache directory (default: $DESKTOP_ENV_CACHE or ~/.cache/desktop-env)")
    common.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS,
                        help="debug logging; stream the build tools' output")

    image = sub.add_parser("image", help="build and manage VM images")
    isub = image.add_subparsers(dest="image_command", required=True)
    b = isub.add_parser("build", parents=[common], help="build an image (reuses cached layers)")
    b.add_argument("--profile", default="base", help="recipe under desktop_env/image/profiles (default: base)")
    b.add_argument("--mirror", help="Debian mirror URL (default: the one the host's apt uses)")
    b.add_argument("--suite", help="Debian suite (default: the recipe's, bookworm)")
    b.add_argument("--screen", help="guest screen size WIDTHxHEIGHT (default: the recipe's, 1920x1080)")
    b.add_argument("--no-auth", action="store_true",
                   help="compatibility: the in-VM server accepts requests without a token")
    b.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"], help="acceleration for the first boot")
    b.add_argument("--force", action="store_true", help="rebuild the final image even if it is up to date")
    b.add_argument("--keep-old", action="store_true",
                   help="keep the images this build supersedes (same profile, screen and auth) and unused layers")
    b.set_defaults(func=cmd_image_build)
    ls = isub.add_parser("list", parents=[common], help="list built images")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_image_list)
    w = isub.add_parser("warm", parents=[common],
                        help="build an image's warm states (its tool already started; restored in a second)")
    w.add_argument("--profile", default="base", help="profile whose newest image is used (default: base)")
    w.add_argument("--path_to_vm", "--image", dest="image", default=None,
                   help="image name or folder (overrides --profile)")
    w.add_argument("--state", action="append", default=None,
                   help="a state to build (repeatable; default: every state the profile declares)")
    w.add_argument("--force", action="store_true", help="rebuild even when the state is up to date")
    w.add_argument("--remove", action="store_true", help="delete the built states instead")
    w.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    w.set_defaults(func=cmd_image_warm)
    ft = isub.add_parser("fit", parents=[common], help="how many environments of an image fit in this host's free "
                         "memory (what run.py caps --num_envs to)")
    ft.add_argument("--profile", default="base", help="profile whose newest image is used (default: base)")
    ft.add_argument("--path_to_vm", "--image", dest="image", default=None,
                    help="image name or folder (overrides --profile)")
    ft.add_argument("--state", action="append", default=None,
                    help="a warm state the environments restore (repeatable; init_state is always counted)")
    ft.add_argument("--restore", choices=["map", "copy"], default=None,
                    help="how states are restored (default: DESKTOP_ENV_RESTORE, else map)")
    ft.add_argument("--ray_resources", action="store_true",
                    help="print only the resources a Ray node of this host advertises, as JSON for `ray start "
                         "--resources` (docs/distributed.md)")
    ft.set_defaults(func=cmd_image_fit)
    lk = isub.add_parser("lock", parents=[common], help="resolve the guest Python packages and write <profile>.lock.json")
    lk.add_argument("--profile", default="base")
    lk.set_defaults(func=cmd_image_lock)
    ex = isub.add_parser("export", parents=[common], help="write an image as one archive with a checksum")
    ex.add_argument("image", help="image name or profile")
    ex.add_argument("archive", help="output .tar path")
    ex.set_defaults(func=cmd_image_export)
    im = isub.add_parser("import", parents=[common], help="import an exported archive")
    im.add_argument("archive")
    im.set_defaults(func=cmd_image_import)
    rm = isub.add_parser("rm", parents=[common], help="remove images")
    rm.add_argument("images", nargs="+")
    rm.set_defaults(func=cmd_image_rm)

    for module in ("desktop_env.cli_vm", "desktop_env.cli_tasks", "desktop_env.cli_mirror", "desktop_env.cli_mcp",
                   "desktop_env.report.cli",
                   "desktop_env.rag.cli"):
        try:
            mod = __import__(module, fromlist=["register"])
        except ImportError:
            continue
        mod.register(sub)
    underscore_flags(parser, hidden={"--image": "--path_to_vm"})
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``desktop-env``; returns the exit status."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    merge_positional_name(args, parser)
    args.argv = argv
    _setup_logging(getattr(args, "verbose", False))
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except DesktopEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
