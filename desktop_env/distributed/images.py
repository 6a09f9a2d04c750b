"""Every node of a cluster runs the driver's image: the same build, copied with ``image export`` / ``image import``.

An image's name carries only its recipe's hash. A node that built the recipe itself holds an image of the same
name with another in-VM server token and another saved state (:attr:`~desktop_env.image.store.ImageInfo.build_id`),
so scores from it are not scores on the driver's image. The driver names its image's build
(:func:`driver_image`); each environment checks its node's copy before its VM starts (:func:`check_node_image`) and
raises :class:`NodeImageError`, which stops the run or the pool instead of being retried: another node would not
fix a node that holds the wrong image.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

from desktop_env.errors import DesktopEnvError, ImageNotFound

#: Where docs/distributed.md says how to copy an image to the nodes.
DOCS = "docs/distributed.md#images-on-the-nodes"


class NodeImageError(DesktopEnvError):
    """A node lacks the driver's image, or holds another build of it."""


@dataclass(frozen=True)
class ImageIdentity:
    """An image by name and build, as the driver holds it."""

    name: str
    build: str

    def copy_command(self) -> str:
        """How to put the driver's build on a node."""
        return (f"`desktop-env image export {self.name} {self.name}.tar` where the driver runs, then "
                f"`desktop-env image import {self.name}.tar` on the node ({DOCS})")


def driver_image(path_to_vm: str | None, cache_dir: Path | str | None = None) -> ImageIdentity | None:
    """The identity of the image ``path_to_vm`` (a name, profile or image folder) means on this machine, or None
    for a disk file of another suite (a ``.qcow2`` path: nodes prepare their own from the same file).

    Raises:
        ImageNotFound: the driver holds no such image (nodes would each pick their own).
    """
    from desktop_env.image.current import resolve

    ref = path_to_vm or "base"
    if Path(ref).expanduser().is_file():
        return None
    image = resolve(ref, Path(cache_dir) if cache_dir else None)
    return ImageIdentity(image.name, image.build_id)


def check_node_image(expected: ImageIdentity | None, cache_dir: Path | str | None = None) -> None:
    """Check that this node holds ``expected`` (None: nothing to check).

    Raises:
        NodeImageError: the node has no image of that name, or another build of it; the message names the node
            and the commands that copy the driver's image there.
    """
    if expected is None:
        return
    from desktop_env.image.store import resolve_image

    node = socket.gethostname()
    try:
        image = resolve_image(expected.name, Path(cache_dir) if cache_dir else None)
    except ImageNotFound as exc:
        raise NodeImageError(
            f"node {node} has no image {expected.name}, the one the driver runs ({exc}). Copy it there: "
            f"{expected.copy_command()}; a build of the recipe on the node would be another build") from None
    if image.build_id != expected.build:
        raise NodeImageError(
            f"node {node} holds another build of {expected.name} (build {image.build_id}, created "
            f"{image.meta.get('created', '?')}; the driver's is build {expected.build}): a rebuild of the recipe has "
            f"its own server token and saved state, so its scores are not the driver's image's. Replace it with the "
            f"driver's: {expected.copy_command()}")
