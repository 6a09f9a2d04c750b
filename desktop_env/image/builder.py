"""Builds a desktop VM image offline: package layer, final assembly, first boot, ready state."""
from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from desktop_env.errors import HostToolMissing, ImageBuildError, PrivilegeError
from desktop_env.image import node_apps, wheels
from desktop_env.image.recipe import Recipe, parse_screen
from desktop_env.image.store import ImageInfo, find_image, human_size, images_dir, layers_dir, prune_superseded
from desktop_env.paths import cache_dir as default_cache_dir
from desktop_env.paths import invoking_user_home, sudo_caller
from desktop_env.paths import allocated, repo_root
from desktop_env.ports import PortLease
from desktop_env.machine import QemuMachine, VMSpec, wait_settled
from desktop_env.vmstate import machine_abi, save_mapped, saving_spec

log = logging.getLogger(__name__)

DEFAULT_MIRROR = "http://deb.debian.org/debian"
#: Host tools per phase, with the Debian package that provides each.
HOST_TOOLS = {
    "mmdebstrap": "mmdebstrap", "mkfs.ext4": "e2fsprogs", "qemu-img": "qemu-utils",
    "qemu-system-x86_64": "qemu-system-x86", "tar": "tar",
}


def host_mirror(suite: str = "bookworm", apt_dir: Path = Path("/etc/apt")) -> str:
    """The Debian mirror the host's apt uses for ``suite`` (falls back to deb.debian.org)."""
    candidates = []
    sources = apt_dir / "sources.list.d"
    for path in [apt_dir / "sources.list", *sorted(sources.glob("*.sources")), *sorted(sources.glob("*.list"))]:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.+)$", stanza, re.M))
                if suite in fields.get("Suites", "").split() and "deb" in fields.get("Types", "").split():
                    candidates += fields.get("URIs", "").split()
        else:
            for line in text.splitlines():
                parts = line.split()
                if len(parts) >= 3 and parts[0] == "deb":
                    uri_idx = 2 if parts[1].startswith("[") else 1
                    if len(parts) > uri_idx + 1 and parts[uri_idx + 1] == suite:
                        candidates.append(parts[uri_idx])
    for uri in candidates:
        if "security" not in uri:
            return uri.rstrip("/")
    return DEFAULT_MIRROR


@dataclass
class BuildOptions:
    """What ``desktop-env image build`` was asked for."""

    profile: str = "base"
    cache_dir: Path | None = None
    mirror: str | None = None
    suite: str | None = None
    screen: str | None = None
    auth: bool = True
    accel: str = "auto"
    verbose: bool = False
    force: bool = False
    keep_old: bool = False
    boot_timeout_s: float = 900.0


@dataclass
class BuildResult:
    """The outcome of a build: the image and per-phase timings (seconds)."""

    image: ImageInfo
    reused: bool
    phases: dict[str, float] = field(default_factory=dict)
    total_s: float = 0.0


class ImageBuilder:
    """Builds one profile into the cache, reusing whatever layers are already there."""

    def __init__(self, options: BuildOptions, log_dir: Path | None = None):
        self.opt = options
        self.cache = default_cache_dir(options.cache_dir)
        self.recipe = Recipe.load(options.profile)
        if options.suite:
            self.recipe.suite = options.suite
        self.mirror = (options.mirror or host_mirror(self.recipe.suite)).rstrip("/")
        self.screen = options.screen or self.recipe.screen
        parse_screen(self.screen)
        self.phases: dict[str, float] = {}
        self.log_dir = log_dir or self.cache / "logs" / time.strftime(f"build-{options.profile}-%Y%m%d-%H%M%S")

    # -- public ---------------------------------------------------------------------
    def hashes(self) -> tuple[str, str]:
        """(package layer hash, assembly hash) for the current recipe and options."""
        pkg = self.package_hash()
        return pkg, self.recipe.assembly_hash(pkg, self.screen, self.opt.auth, machine_abi())

    def package_hash(self) -> str:
        """This profile's package-layer hash; a derived profile's includes its parent's."""
        parent = self._parent_builder()
        return self.recipe.package_hash(self.mirror, parent.package_hash() if parent else None)

    def _parent_builder(self) -> "ImageBuilder | None":
        """A builder for the profile this one extends (same cache, mirror, suite), or None."""
        if not self.recipe.extends:
            return None
        return ImageBuilder(BuildOptions(profile=self.recipe.extends, cache_dir=self.opt.cache_dir,
                                         mirror=self.mirror, suite=self.opt.suite, verbose=self.opt.verbose),
                            log_dir=self.log_dir)

    def build(self) -> BuildResult:
        """Build (or reuse) the image. Atomic: only a complete image is ever published.

        Raises:
            ImageBuildError, HostToolMissing, PrivilegeError
        """
        start = time.monotonic()
        pkg_hash, asm_hash = self.hashes()
        existing = find_image(self.recipe.name, self.cache, assembly_hash=asm_hash)
        if existing and not self.opt.force:
            log.info("image %s is up to date (%s)", existing.name, existing.path)
            return BuildResult(existing, True, {}, time.monotonic() - start)
        self._preflight()
        images_dir(self.cache).mkdir(parents=True, exist_ok=True)
        lock_path = images_dir(self.cache) / f".{self.recipe.name}.build.lock"
        with open(lock_path, "w") as lock_fh:
            try:
                fcntl.flock(lock_fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("another build of %s is running; waiting for it", self.recipe.name)
                fcntl.flock(lock_fh, fcntl.LOCK_EX)
                existing = find_image(self.recipe.name, self.cache, assembly_hash=asm_hash)
                if existing and not self.opt.force:
                    return BuildResult(existing, True, {}, time.monotonic() - start)
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log.info("building profile %s (package layer %s, image %s); logs in %s",
                     self.recipe.name, pkg_hash, asm_hash, self.log_dir)
            layer = self._package_layer(pkg_hash)
            image = self._assemble(layer, pkg_hash, asm_hash)
            if not self.opt.keep_old:
                prune_superseded(image, self.cache)
            self._hand_over_to_sudo_caller(image)
        total = time.monotonic() - start
        log.info("image %s ready in %.0f s (%s on disk)", image.name, total, human_size(image.disk_usage()))
        return BuildResult(image, False, dict(self.phases), total)

    def _hand_over_to_sudo_caller(self, image) -> None:
        """Under sudo, give the image, the logs and the cache folders to the user who ran sudo, so
        their runs can use the image and create their runtime state beside it. The package layers
        stay root's: only builds read them."""
        owner = sudo_caller()
        if owner is None:
            return
        uid, gid = owner
        # the runtime folder too: the ready-state boot leased its ports there as root, and the user's
        # runs create their VM folders and port locks in it
        trees = [image.path, self.log_dir, *[t for t in (self.cache / "run",) if t.exists()]]
        home = invoking_user_home()
        # folders this build may have created on the way to the cache (~/.cache itself on a new account)
        made = [p for p in (self.cache, *self.cache.parents) if home in p.parents and p.exists() and p.stat().st_uid == 0]
        for top in [*made, images_dir(self.cache), self.log_dir.parent]:
            if top.exists():
                os.chown(top, uid, gid)
        for tree in trees:
            for dirpath, dirnames, filenames in os.walk(tree):
                os.chown(dirpath, uid, gid)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
        log.info("image %s handed over to uid %d (the user who ran sudo)", image.name, uid)

    # -- phases ---------------------------------------------------------------------
    def _preflight(self) -> None:
        # Root first: a normal user's PATH lacks /usr/sbin (mkfs.ext4), and the build re-runs through sudo anyway.
        if os.geteuid() != 0:
            raise PrivilegeError("building an image needs root (mmdebstrap in root mode, chroot, and file "
                                 "ownership in the guest filesystem): run it as root, or as a user with sudo")
        for tool, package in HOST_TOOLS.items():
            if not shutil.which(tool):
                raise HostToolMissing(tool, package, "build images")

    def _package_layer(self, pkg_hash: str) -> Path:
        layer = layers_dir(self.cache) / pkg_hash
        if (layer / "layer.json").exists():
            log.info("[packages] reusing cached package layer %s", pkg_hash)
            return layer
        partial = layer.with_name(layer.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            parent = self._parent_builder()
            if parent:
                parent_hash = parent.package_hash()
                parent_layer = parent._package_layer(parent_hash)
                return self._build_derived_layer(pkg_hash, layer, partial, parent_layer, parent_hash)
            return self._build_package_layer(pkg_hash, layer, partial)
        except BaseException:
            # An interrupted or failed layer leaves nothing behind (it is GiBs).
            shutil.rmtree(partial, ignore_errors=True)
            raise

    def _fetch_wheels(self, wheel_dir: Path) -> dict[str, list[dict]]:
        """Download the pinned wheels of this layer's venvs; returns the pins per venv."""
        t0 = time.monotonic()
        venvs = self.recipe.layer_venvs
        pins = self.recipe.locked_pins()
        if pins is None:
            log.warning("[wheels] %s is missing or does not match the recipe; resolving now "
                        "(run `desktop-env image lock --profile %s` and commit the lock for reproducible builds)",
                        self.recipe.lock_path, self.recipe.name)
            lock = wheels.lock_venvs({v.name: v.requirements for v in venvs},
                                     self.recipe.python_version, self.log_dir / "wheels.log",
                                     no_deps={v.name for v in venvs if v.no_deps})
            pins = {name: entry["pins"] for name, entry in lock["venvs"].items()}
        for venv in venvs:
            log.info("[wheels] downloading %d pinned packages for guest venv %s", len(pins[venv.name]), venv.name)
            wheels.download(pins[venv.name], self.recipe.python_version, wheel_dir / venv.name,
                            self.log_dir / "wheels.log")
        self._phase_done("wheels", t0)
        return pins

    def _build_package_layer(self, pkg_hash: str, layer: Path, partial: Path) -> Path:
        wheel_dir = partial / "wheels"
        pins = self._fetch_wheels(wheel_dir)

        t0 = time.monotonic()
        (wheel_dir / "install-venvs.sh").write_text(self._venv_script(pins))
        hooks = [
            f'cp -a {shlex.quote(str(wheel_dir))} "$1/tmp/desktop-env-wheels"',
            'chroot "$1" /bin/sh -eu /tmp/desktop-env-wheels/install-venvs.sh',
            f'cp "$1"/tmp/desktop-env-wheels/freeze-*.txt {shlex.quote(str(partial))}/',
            "chroot \"$1\" dpkg-query -W -f='${Package}\\t${Version}\\n' > " + shlex.quote(str(partial / "debs.tsv")),
            'rm -rf "$1/tmp/desktop-env-wheels" "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*',
        ]
        cmd = ["mmdebstrap", "--mode=root", "--variant=apt", "--format=tar",
               f"--components={','.join(self.recipe.components)}",
               f"--include={','.join(self.recipe.packages)}",
               "--aptopt=Acquire::Retries \"3\"", "--dpkgopt=path-exclude=/usr/share/doc/*/changelog*"]
        cmd += [f"--customize-hook={h}" for h in hooks]
        cmd += [self.recipe.suite, str(partial / "rootfs.tar"), self.mirror]
        log.info("[packages] mmdebstrap %s from %s: %d packages (a few minutes)",
                 self.recipe.suite, self.mirror, len(self.recipe.packages))
        self._run(cmd, "packages")
        shutil.rmtree(wheel_dir, ignore_errors=True)
        self._write_layer_metadata(partial, pkg_hash, {})
        self._phase_done("packages", t0)
        shutil.rmtree(layer, ignore_errors=True)
        os.replace(partial, layer)
        return layer

    def _write_layer_metadata(self, partial: Path, pkg_hash: str, python: dict, parent: str | None = None) -> None:
        """manifest.json (Debian packages and per-venv freezes; ``python`` holds inherited venvs)
        and layer.json, from the files the layer's build left in ``partial``."""
        manifest = {
            "debian": dict(line.split("\t", 1) for line in (partial / "debs.tsv").read_text().splitlines() if line),
            "python": dict(python),
        }
        for freeze in partial.glob("freeze-*.txt"):
            venv = freeze.stem[len("freeze-"):]
            manifest["python"][venv] = dict(
                l.split("==", 1) for l in freeze.read_text().splitlines() if "==" in l)
        if (partial / "node-apps.json").exists():
            manifest["node_apps"] = json.loads((partial / "node-apps.json").read_text())
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
        info = {
            "hash": pkg_hash, "profile": self.recipe.name, "suite": self.recipe.suite, "mirror": self.mirror,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rootfs_bytes": (partial / "rootfs.tar").stat().st_size,
        }
        if parent:
            info["parent"] = parent
        (partial / "layer.json").write_text(json.dumps(info, indent=1))

    def _build_derived_layer(self, pkg_hash: str, layer: Path, partial: Path, parent_layer: Path,
                             parent_hash: str) -> Path:
        """A layer on top of the parent's: unpack its root filesystem, apt-get install the
        profile's extra packages in a chroot, add its venvs, pack it again."""
        wheel_dir = partial / "wheels"
        pins = self._fetch_wheels(wheel_dir)
        t0 = time.monotonic()
        root = partial / "rootfs"
        root.mkdir()
        log.info("[packages] unpacking the %s package layer %s", self.recipe.extends, parent_hash)
        self._run(["tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-xpf",
                   str(parent_layer / "rootfs.tar"), "-C", str(root)], "packages")
        wheel_dir.mkdir(parents=True, exist_ok=True)  # a profile that adds no venvs fetched no wheels
        (wheel_dir / "install-venvs.sh").write_text(self._venv_script(pins))
        shutil.copytree(wheel_dir, root / "tmp/desktop-env-wheels")
        shutil.rmtree(wheel_dir, ignore_errors=True)
        # Package scripts must not start services in the build chroot.
        policy = root / "usr/sbin/policy-rc.d"
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        resolv = root / "etc/resolv.conf"
        saved_resolv = resolv.read_bytes() if resolv.is_file() and not resolv.is_symlink() else None
        resolv.unlink(missing_ok=True)
        shutil.copy("/etc/resolv.conf", resolv)
        packages = " ".join(shlex.quote(p) for p in self.recipe.own_packages)
        log.info("[packages] apt-get install on the %s layer: %d packages, then the venvs (a few minutes)",
                 self.recipe.extends, len(self.recipe.own_packages))
        self._run_in_chroot(root, (
            "apt-get -o Acquire::Retries=3 update && "
            "DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 install -y --no-install-recommends "
            f"-o Dpkg::Options::=--path-exclude=/usr/share/doc/*/changelog* {packages} && "
            "sh -eu /tmp/desktop-env-wheels/install-venvs.sh && "
            "dpkg-query -W -f='${Package}\\t${Version}\\n' > /tmp/desktop-env-wheels/debs.tsv"), "packages")
        for path in (root / "tmp/desktop-env-wheels").glob("freeze-*.txt"):
            shutil.copy(path, partial / path.name)
        shutil.copy(root / "tmp/desktop-env-wheels/debs.tsv", partial / "debs.tsv")
        shutil.rmtree(root / "tmp/desktop-env-wheels")
        policy.unlink()
        resolv.unlink()
        if saved_resolv is not None:
            resolv.write_bytes(saved_resolv)
        for junk in [*(root / "var/cache/apt/archives").glob("*.deb"), *(root / "var/lib/apt/lists").glob("*_*")]:
            junk.unlink()
        self._install_node_apps(root, partial)
        log.info("[packages] packing the %s layer", self.recipe.name)
        self._run(["tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-cpf", str(partial / "rootfs.tar"),
                   "-C", str(root), "."], "packages")
        shutil.rmtree(root)
        parent_manifest = json.loads((parent_layer / "manifest.json").read_text())
        self._write_layer_metadata(partial, pkg_hash, parent_manifest.get("python", {}), parent=parent_hash)
        self._phase_done("packages", t0)
        shutil.rmtree(layer, ignore_errors=True)
        os.replace(partial, layer)
        return layer

    def _install_node_apps(self, root: Path, partial: Path) -> None:
        """Install the profile's Node.js apps on the host (cached) and copy them under ``root``;
        what went in is written to ``partial/node-apps.json`` for the layer's manifest."""
        if not self.recipe.node_apps:
            return
        t0 = time.monotonic()
        locks = self.recipe.locked_node_apps()
        if locks is None:
            log.warning("[node-apps] %s has no lock for the recipe's node.apps; resolving now (run `desktop-env "
                        "image lock --profile %s` and commit it for reproducible builds)",
                        self.recipe.lock_path, self.recipe.name)
            locks = {a.name: node_apps.lock(a, self.cache, self.log_dir / "node-apps.log")
                     for a in self.recipe.node_apps}
        installed = {}
        for app in self.recipe.node_apps:
            tree = node_apps.install_tree(app, locks[app.name], self.cache, self.log_dir / "node-apps.log")
            installed[app.name] = node_apps.copy_into(root, app, tree)
        (partial / "node-apps.json").write_text(json.dumps(installed, indent=1, sort_keys=True))
        self._phase_done("node-apps", t0)

    def _run_in_chroot(self, root: Path, script: str, phase: str) -> None:
        """Run ``script`` (sh) chrooted in ``root`` with /proc, /dev and /dev/shm mounted in a private
        mount namespace: the mounts vanish with the process, so none can outlive a failed build."""
        r = shlex.quote(str(root))
        outer = (f"mount -t proc proc {r}/proc && mount --rbind /dev {r}/dev && mount --make-rslave {r}/dev && "
                 f"mount -t tmpfs -o mode=1777 tmpfs {r}/dev/shm && "
                 f"exec chroot {r} /bin/sh -euc {shlex.quote(script)}")
        self._run(["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-euc", outer], phase)

    def _venv_script(self, pins: dict[str, list[dict]]) -> str:
        lines = ["# Generated by the image builder: one virtual environment per tool, offline."]
        for venv in self.recipe.layer_venvs:
            path = shlex.quote(venv.path)
            flags = "--system-site-packages " if venv.system_site_packages else ""
            specs = " ".join(shlex.quote(f"{p['name']}=={p['version']}") for p in pins[venv.name])
            nodeps = "--no-deps " if venv.no_deps else ""
            lines += [
                f"python3 -m venv {flags}{path}",
                f"{path}/bin/pip install --quiet --no-index --disable-pip-version-check {nodeps}"
                f"--find-links /tmp/desktop-env-wheels/{venv.name} {specs}",
                f"{path}/bin/pip freeze --disable-pip-version-check > /tmp/desktop-env-wheels/freeze-{venv.name}.txt",
            ]
            for exe in venv.expose:
                lines.append(f"ln -sf {path}/bin/{shlex.quote(exe)} /usr/local/bin/{shlex.quote(exe)}")
        return "\n".join(lines) + "\n"

    def _assemble(self, layer: Path, pkg_hash: str, asm_hash: str) -> ImageInfo:
        name = f"{self.recipe.name}-{asm_hash}"
        final = images_dir(self.cache) / name
        work = images_dir(self.cache) / f"{name}.partial"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        root = work / "rootfs"
        try:
            token = secrets.token_urlsafe(24)
            t0 = time.monotonic()
            log.info("[assembly] unpacking the package layer")
            root.mkdir()
            self._run(["tar", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-xpf", str(layer / "rootfs.tar"), "-C", str(root)], "assembly")
            self._install_guest_files(root, token)
            for script in self.recipe.assembly_scripts:
                shutil.copy(script, root / "tmp" / script.name)
                if self.recipe.chroot_mounts:
                    self._run_in_chroot(root, f"sh -eu /tmp/{script.name}", "assembly")
                else:
                    self._run(["chroot", str(root), "/bin/sh", "-eu", f"/tmp/{script.name}"], "assembly")
                (root / "tmp" / script.name).unlink(missing_ok=True)
            kernel, initrd = self._copy_boot_files(root, work)
            self._phase_done("assembly", t0)

            t0 = time.monotonic()
            log.info("[filesystem] mkfs.ext4 -d (no loop mount), then qcow2")
            raw = work / "disk.raw"
            with open(raw, "wb") as fh:
                fh.truncate(self.recipe.disk_size_gb * 1024 ** 3)
            self._run(["mkfs.ext4", "-q", "-F", "-L", "desktop-env", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                       "-d", str(root), str(raw)], "filesystem")
            shutil.rmtree(root)
            self._run(["qemu-img", "convert", "-O", "qcow2", str(raw), str(work / "disk.qcow2")], "filesystem")
            raw.unlink()
            self._phase_done("filesystem", t0)

            t0 = time.monotonic()
            boot_info = self._first_boot(work, kernel, initrd, token)
            self._phase_done("ready-state", t0)

            manifest = json.loads((layer / "manifest.json").read_text())
            meta = {
                "name": name, "profile": self.recipe.name, "ready": True,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "package_hash": pkg_hash, "assembly_hash": asm_hash, "machine_abi": machine_abi(),
                "machine_type": boot_info["machine_type"],
                "suite": self.recipe.suite, "mirror": self.mirror,
                "screen": self.screen, "memory_mb": self.recipe.memory_mb, "cpus": self.recipe.cpus,
                "kernel_cmdline": self.recipe.kernel_cmdline,
                "server_port": self.recipe.server_port, "cdp_port": self.recipe.cdp_port,
                "auth": self.opt.auth, "token": token if self.opt.auth else None,
                "files": {"disk": "disk.qcow2", "kernel": kernel.name, "initrd": initrd.name,
                          "state": "init_state.bin", "ram": "init_state.ram", "screenshot": "ready.png"},
                "ready_state": {"name": "init_state", "accel": boot_info["accel"], "ram": "mapped",
                                "qemu_version": boot_info["qemu_version"],
                                "boot_to_ready_s": boot_info["boot_s"], "save_s": boot_info["save_s"]},
                "sizes": {p.name: p.stat().st_size for p in work.iterdir() if p.is_file()},
                "allocated": {p.name: allocated(p) for p in work.iterdir() if p.is_file()},
                "build_phases_s": {k: round(v, 1) for k, v in self.phases.items()},
                "manifest": manifest,
            }
            (work / "metadata.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            (work / "disk.qcow2").chmod(0o444)
            (work / "init_state.bin").chmod(0o444)
            shutil.rmtree(final, ignore_errors=True)
            os.replace(work, final)
            return ImageInfo.load(final)
        except BaseException:
            # A failed or interrupted build never leaves something that looks ready.
            shutil.rmtree(work, ignore_errors=True)
            raise

    def _install_guest_files(self, root: Path, token: str) -> None:
        for tree in self.recipe.assembly_files:
            self._run(["cp", "-r", "--preserve=mode,timestamps,links", f"{tree}/.", str(root)], "assembly")
        dest = root / "opt/desktop-env/vm_server"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(repo_root() / "vm_server", dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        conf = root / "etc/desktop-env"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "server.json").write_text(json.dumps({
            "host": "0.0.0.0", "port": self.recipe.server_port, "auth": self.opt.auth,
            "token": token if self.opt.auth else None, "clock_settime": True, "launch_cgroup": True,
        }, indent=1))
        (conf / "screen").write_text(self.screen + "\n")
        (conf / "cdp_port").write_text(f"{self.recipe.cdp_port}\n")

    def _copy_boot_files(self, root: Path, work: Path) -> tuple[Path, Path]:
        kernels = sorted((root / "boot").glob("vmlinuz-*"))
        initrds = sorted((root / "boot").glob("initrd.img-*"))
        if not kernels or not initrds:
            raise ImageBuildError("assembly", "no kernel or initrd in the guest's /boot "
                                              "(is linux-image-amd64 in the profile's packages?)")
        kernel, initrd = work / "vmlinuz", work / "initrd.img"
        shutil.copy(kernels[-1], kernel)
        shutil.copy(initrds[-1], initrd)
        return kernel, initrd

    def _first_boot(self, work: Path, kernel: Path, initrd: Path, token: str) -> dict:
        width, height = parse_screen(self.screen)
        with PortLease(self.cache / "run" / "ports", 1) as ports:
            spec = saving_spec(VMSpec(disk=work / "disk.qcow2", kernel=kernel, initrd=initrd,
                                      cmdline=self.recipe.kernel_cmdline, memory_mb=self.recipe.memory_mb,
                                      cpus=self.recipe.cpus, screen=(width, height), accel=self.opt.accel,
                                      forwards={self.recipe.server_port: ports.ports[0]}), work / "init_state.ram")
            machine = QemuMachine(spec, work / "boot", die_with_parent=True)
            t0 = time.monotonic()
            log.info("[ready-state] first boot (QEMU, %s)", self.opt.accel)
            try:
                machine.start()
                log.info("[ready-state] QEMU running with %s acceleration; waiting for the desktop", machine.accel)
                self._wait_guest_ready(machine, ports.ports[0], token)
                boot_s = time.monotonic() - t0
                wait_settled(machine, work / "ready.png")
                log.info("[ready-state] desktop settled after %.0f s; saving the ready state", time.monotonic() - t0)
                saved = save_mapped(machine, work / "init_state.bin")
            except ImageBuildError:
                raise
            except Exception as exc:
                raise ImageBuildError("ready-state", str(exc), machine.command, machine.log_tail(),
                                      str(work / "boot")) from exc
            finally:
                machine.stop()
            shutil.copy(work / "boot" / "console.log", self.log_dir / "first-boot-console.log")
            shutil.rmtree(work / "boot", ignore_errors=True)
        return {"accel": machine.accel, "boot_s": round(boot_s, 1), **saved}

    def _wait_guest_ready(self, machine: QemuMachine, port: int, token: str) -> None:
        deadline = time.monotonic() + self.opt.boot_timeout_s
        url = f"http://127.0.0.1:{port}/health"
        last = "no answer yet"
        while time.monotonic() < deadline:
            if not machine.is_running():
                raise ImageBuildError("ready-state", "QEMU exited during the first boot", machine.command,
                                      machine.log_tail())
            try:
                reply = requests.get(url, timeout=3)
                body = reply.json()
                last = f"HTTP {reply.status_code} {body}"
                if reply.ok and body.get("display"):
                    headers = {"Authorization": f"Bearer {token}"} if self.opt.auth else {}
                    check = requests.post(f"http://127.0.0.1:{port}/execute", headers=headers, timeout=30,
                                          json={"command": self.recipe.ready_check, "shell": True})
                    if check.ok and check.json().get("returncode") == 0:
                        return
                    last = f"ready check `{self.recipe.ready_check}`: HTTP {check.status_code} {check.text[:200]}"
            except (requests.RequestException, ValueError) as exc:
                last = type(exc).__name__
            time.sleep(1.0)
        raise ImageBuildError("ready-state", f"the in-VM server did not report a ready display within "
                                             f"{self.opt.boot_timeout_s:.0f} s (last: {last})",
                              machine.command, machine.log_tail(), str(machine.run_dir))

    # -- helpers --------------------------------------------------------------------
    def _phase_done(self, phase: str, t0: float) -> None:
        self.phases[phase] = time.monotonic() - t0
        log.info("[%s] done in %.0f s", phase, self.phases[phase])

    def _run(self, cmd: list[str], phase: str) -> None:
        """Run a build command, logging to the phase's log file (and stderr with --verbose)."""
        log_path = self.log_dir / f"{phase}.log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # Unbuffered: when the cache filesystem is full, the failing write raises once, here.
        with open(log_path, "ab", buffering=0) as fh:
            fh.write(("$ " + shlex.join(cmd) + "\n").encode())
            # The host's pip settings (index, certificates, find-links) mean nothing in the guest.
            env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env)
            try:
                for raw in proc.stdout:
                    if self.opt.verbose:
                        sys.stderr.write(raw.decode(errors="replace"))
                    fh.write(raw)
            except BaseException as exc:
                # Never leave the command running on (it would keep writing into a folder being removed).
                proc.kill()
                proc.wait()
                if isinstance(exc, OSError):
                    raise ImageBuildError(phase, f"could not write the build log {log_path}: {exc} (is the cache "
                                                 f"filesystem full? free space under {self.cache})", cmd) from exc
                raise
            code = proc.wait()
        if code != 0:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-25:])
            hint = ""
            if "No space left on device" in tail:
                hint = f" (the cache filesystem is full: free space under {self.cache})"
            raise ImageBuildError(phase, f"command exited with status {code}{hint}", cmd, tail, str(log_path))


def ensure_image(profile: str = "base", cache_dir: Path | None = None, screen: str | None = None,
                 auth: bool = True, accel: str = "auto") -> ImageInfo:
    """Return a ready image for the current recipe, building whatever is missing."""
    return ImageBuilder(BuildOptions(profile=profile, cache_dir=cache_dir, screen=screen, auth=auth,
                                     accel=accel)).build().image


__all__ = ["BuildOptions", "BuildResult", "ImageBuilder", "ensure_image", "host_mirror"]
