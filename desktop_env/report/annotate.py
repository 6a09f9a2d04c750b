"""Screenshots with the step's action drawn on them (click point, drag path, typed text, keys) using Pillow."""
from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

CLICK_COLOUR = (230, 30, 30)
DRAG_COLOUR = (30, 110, 230)
TEXT_BG = (255, 250, 205)
TEXT_FG = (20, 20, 20)
_FONT_CANDIDATES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")


def _font(size: int):
    for path in _FONT_CANDIDATES:
        if Path(path).is_file():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def _label_box(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, font, size: tuple[int, int],
               outline=CLICK_COLOUR) -> None:
    """A filled box holding ``text`` near ``xy``, kept inside the image."""
    text = text if len(text) <= 120 else text[:117] + "..."
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    w, h = right - left + 16, bottom - top + 12
    x = min(max(0, xy[0]), size[0] - w)
    y = min(max(0, xy[1]), size[1] - h)
    draw.rectangle([x, y, x + w, y + h], fill=TEXT_BG, outline=outline, width=3)
    draw.text((x + 8 - left, y + 6 - top), text, fill=TEXT_FG, font=font)


def annotate(image: Image.Image, parts: list[dict], scale: float = 1.0) -> Image.Image:
    """A copy of ``image`` with each structured action part drawn on it.

    Clicks: a ring and cross at (x, y), numbered when there are several; drags: the
    path as an arrowed line; typing: the text in a box near the pointer (or at the top
    left); keys: a box listing them. Coordinates are screen pixels; ``scale`` maps them
    to the image (for screenshots taken at another size).
    """
    img = image.convert("RGB").copy()
    draw = ImageDraw.Draw(img)
    unit = max(img.width, img.height) / 1920
    font = _font(max(12, int(22 * unit)))
    r = max(8, int(18 * unit))
    pointer = None
    boxes_y = int(10 * unit)
    clicks = [p for p in parts if p.get("x") is not None and p.get("type") != "DRAG_TO"]
    for i, p in enumerate(parts):
        kind = p.get("type", "")
        if "path" in p and p["path"] and p["path"][0][0] is not None:
            pts = [(float(a) * scale, float(b) * scale) for a, b in p["path"]]
            draw.line(pts, fill=DRAG_COLOUR, width=max(3, int(5 * unit)))
            for a in pts[:1]:
                draw.ellipse([a[0] - r / 2, a[1] - r / 2, a[0] + r / 2, a[1] + r / 2], fill=DRAG_COLOUR)
            end = pts[-1]
            draw.regular_polygon((end[0], end[1], r), 3, fill=DRAG_COLOUR)
            pointer = end
        elif "x" in p and p.get("x") is not None:
            x, y = float(p["x"]) * scale, float(p["y"]) * scale
            colour = DRAG_COLOUR if kind in ("MOVE_TO", "DRAG_TO") else CLICK_COLOUR
            draw.ellipse([x - r, y - r, x + r, y + r], outline=colour, width=max(3, int(4 * unit)))
            draw.line([x - r * 1.6, y, x + r * 1.6, y], fill=colour, width=2)
            draw.line([x, y - r * 1.6, x, y + r * 1.6], fill=colour, width=2)
            if len(clicks) > 1 and kind not in ("MOVE_TO",):
                draw.text((x + r + 4, y - r - 4), str(i + 1), fill=colour, font=font)
            if kind not in ("CLICK", "MOVE_TO"):
                _label_box(draw, (x + r + 6, y + r + 6), kind.lower().replace("_", " "), font, img.size, colour)
            pointer = (x, y)
        if kind == "TYPING" and p.get("text"):
            at = (pointer[0] + r, pointer[1] + r) if pointer else (int(10 * unit), boxes_y)
            _label_box(draw, at, f"type: {p['text']!r}", font, img.size)
            if not pointer:
                boxes_y += int(44 * unit)
        elif kind in ("HOTKEY", "PRESS", "KEY_DOWN", "KEY_UP") and p.get("keys"):
            _label_box(draw, (int(10 * unit), boxes_y), f"{kind.lower()}: {'+'.join(p['keys'])}", font, img.size)
            boxes_y += int(44 * unit)
        elif kind in ("COMMAND", "PYAUTOGUI") and p.get("text"):
            _label_box(draw, (int(10 * unit), boxes_y), f"{kind.lower()}: {p['text']}", font, img.size)
            boxes_y += int(44 * unit)
        elif kind in ("DONE", "FAIL", "WAIT"):
            _label_box(draw, (int(10 * unit), boxes_y), kind, font, img.size)
            boxes_y += int(44 * unit)
    return img


def annotate_file(src: Path, dest: Path, parts: list[dict], max_width: int = 1280) -> Path:
    """Annotate the screenshot ``src`` and save it to ``dest`` (JPEG, at most ``max_width`` wide)."""
    with Image.open(src) as im:
        out = annotate(im, parts)
    if out.width > max_width:
        out = out.resize((max_width, round(out.height * max_width / out.width)), Image.LANCZOS)
    dest.parent.mkdir(parents=True, exist_ok=True)
    out.save(dest, "JPEG", quality=85)
    return dest
