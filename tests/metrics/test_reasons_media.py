"""Every image, GIMP, media and VLC metric says why it scores below 1, read with ``judge`` on real files:
charts drawn with matplotlib, pictures edited with Pillow, sounds made by ffmpeg, videos written by OpenCV,
MP3s tagged with mutagen, vlcrc files and VLC status XML."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont, ImageOps

from desktop_env.evaluators.evaluator import judge
from desktop_env.evaluators.metrics import gimp, gimp_files, images, media, vlc
from desktop_env.evaluators.reasons import (MISSING_RESULT, PASSED, RULE_FAILED, STRUCTURE_MISMATCH,
                                            THRESHOLD_NOT_MET, UNREADABLE_RESULT, VALUE_MISMATCH)
from desktop_env.evaluators.values import GuestText
from desktop_env.registry import METRICS
from tests.metrics.test_gimp_metrics import (FONT, SIZE, contrasted, layer_resized, object_on, other_photo, photo,
                                             saturated, scaled, triangle)
from tests.metrics.test_images_compare import chart
from tests.metrics.test_media_metrics import (ffmpeg, frames, melody, status_xml, tagged, vlcrc, write_video,
                                              write_wav)

IMAGE_METRICS = ["compare_images", "compare_image_list", "compare_jupyterlab_images", "compare_metabase_images"]
GIMP_METRICS = ["check_structure_sim", "check_structure_sim_with_threshold", "check_structure_sim_resized",
                "check_brightness_decrease_and_structure_sim", "check_contrast_increase_and_structure_sim",
                "check_saturation_increase_and_structure_sim", "check_palette_and_structure_sim",
                "check_image_mirror", "check_file_exists_and_structure_sim", "check_green_background",
                "check_triangle_position", "check_image_size", "check_image_file_size", "check_config_status",
                "compare_image_text"]
MEDIA_METRICS = ["check_mp3_meta", "compare_audios", "compare_videos"]
VLC_METRICS = ["check_qt_bgcone", "check_qt_max_volume", "check_qt_minimal_view",
               "check_one_instance_when_started_from_file", "check_play_and_exit", "check_global_key_play_pause",
               "check_qt_slider_colours", "is_vlc_recordings_folder", "is_vlc_playing", "is_vlc_fullscreen"]

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract command is not installed")


def test_every_metric_of_these_modules_is_covered():
    modules = {m.__name__ for m in (images, gimp, gimp_files, media, vlc)}
    registered = {name for name, entry in METRICS.entries.items() if entry.func.__module__ in modules}
    assert registered == set(IMAGE_METRICS + GIMP_METRICS + MEDIA_METRICS + VLC_METRICS)


def run(name: str, result, expected=None, **options):
    """The verdict of the registered metric ``name``."""
    return judge(name, METRICS.get(name).func, result, expected, **options)


def failed(verdict, kind: str, *parts: str, score: float = 0.0) -> None:
    """The verdict scores ``score`` with a reason of ``kind`` whose text holds every one of ``parts``."""
    assert float(verdict) == pytest.approx(score), verdict
    assert verdict.reason.kind == kind, verdict.reason
    for part in parts:
        assert part in verdict.reason.text, (part, verdict.reason.text)


def passed(verdict) -> None:
    assert float(verdict) == 1.0 and verdict.reason.kind == PASSED, verdict


# --------------------------------------------------------------------------- images (charts)

@pytest.fixture(scope="module")
def charts(tmp_path_factory):
    """A bar chart (640x480); the same chart at 1.5 and 0.75 times the scale; at 1.5 times, a pie chart of the
    same data, the bar chart with one bar taller and a blank image; a .png that is not an image."""
    d = tmp_path_factory.mktemp("charts")
    out = {"gold": Path(chart(d / "gold.png")), "big": Path(chart(d / "big.png", dpi=150)),
           "small": Path(chart(d / "small.png", dpi=75)),
           "pie_big": Path(chart(d / "pie_big.png", kind="pie", dpi=150)),
           "other_big": Path(chart(d / "other_big.png", values=(23, 60, 56, 78, 33), dpi=150))}
    Image.new("RGB", (960, 720), "white").save(d / "blank_big.png")
    out["blank_big"] = d / "blank_big.png"
    (d / "junk.png").write_text("not a png")
    out["junk"] = d / "junk.png"
    return out


class TestImageMetrics:
    @pytest.mark.parametrize("name", IMAGE_METRICS)
    @pytest.mark.parametrize("size", ["big", "small"])
    def test_the_same_chart_at_another_size_passes(self, charts, name, size):
        """The grader fix: an export of the right chart at another size scores 1 by default."""
        passed(run(name, charts[size], charts["gold"]))

    @pytest.mark.parametrize("name", IMAGE_METRICS)
    @pytest.mark.parametrize("other", ["pie_big", "other_big"])
    def test_another_chart_at_another_size_fails_on_the_threshold(self, charts, name, other):
        v = run(name, charts[other], charts["gold"])
        failed(v, THRESHOLD_NOT_MET, "< threshold 0.95", "of the expected 640x480 image",
               "(result 960x720, compared after scaling both to 640x480)")
        assert re.search(r"similarity 0\.\d{4} < threshold", v.reason.text), v.reason.text

    @pytest.mark.parametrize("name", IMAGE_METRICS)
    def test_a_blank_image_of_another_size_never_matches_a_chart(self, charts, name):
        failed(run(name, charts["blank_big"], charts["gold"]), THRESHOLD_NOT_MET,
               "similarity 0 < threshold 0.95: the result image is blank (a single colour), the expected one is not")

    @pytest.mark.parametrize("name", IMAGE_METRICS)
    def test_a_missing_result_is_named(self, charts, name):
        failed(run(name, None, charts["gold"]), MISSING_RESULT, "there is no result image (None)")
        absent = charts["gold"].parent / "absent.png"
        failed(run(name, absent, charts["gold"]), MISSING_RESULT, f"the result image {absent} does not exist")

    @pytest.mark.parametrize("name", IMAGE_METRICS)
    def test_a_result_that_is_not_an_image_is_unreadable(self, charts, name):
        failed(run(name, charts["junk"], charts["gold"]), UNREADABLE_RESULT,
               "the result file junk.png is not a readable image")

    @pytest.mark.parametrize("name", ["compare_images", "compare_image_list"])
    def test_resize_false_demands_the_same_size(self, charts, name):
        failed(run(name, charts["big"], charts["gold"], resize=False), STRUCTURE_MISMATCH,
               "image sizes differ: result 960x720, expected 640x480 (resize is false)")
        passed(run(name, charts["gold"], charts["gold"], resize=False))

    def test_the_most_different_region_is_where_the_picture_changed(self, tmp_path):
        """Two bars on white; in the result the right bar is taller: the reason points at its top."""
        def bars(right_top: int) -> Path:
            im = Image.new("RGB", (400, 300), "white")
            draw = ImageDraw.Draw(im)
            draw.rectangle((50, 50, 100, 250), fill=(30, 60, 160))
            draw.rectangle((250, right_top, 300, 250), fill=(30, 60, 160))
            path = tmp_path / f"bars{right_top}.png"
            im.save(path)
            return path
        v = run("compare_images", bars(60), bars(150))
        failed(v, THRESHOLD_NOT_MET, "of the expected 400x300 image")
        left, right, top, bottom = map(int, re.search(r"region: x (\d+)-(\d+), y (\d+)-(\d+)", v.reason.text).groups())
        assert 230 <= left and right <= 320 and 40 <= top and bottom <= 170, v.reason.text

    def test_reference_base_result_grades_and_explains(self, charts):
        v = run("compare_images", charts["big"], charts["gold"], reference_base_result=0.5)
        assert 0.5 < float(v) < 1.0
        failed(v, THRESHOLD_NOT_MET, "with reference_base_result 0.5 grades", score=float(v))
        assert re.search(r"grayscale SSIM 0\.\d{4} with reference_base_result 0\.5 grades 0\.\d{4}",
                         v.reason.text), v.reason.text
        failed(run("compare_images", charts["pie_big"], charts["gold"], reference_base_result=0.9),
               THRESHOLD_NOT_MET, "< 0.9100 (reference_base_result 0.9 + 0.01)")
        failed(run("compare_images", charts["blank_big"], charts["gold"], reference_base_result=0.1),
               THRESHOLD_NOT_MET, "the result image is blank")
        passed(run("compare_images", charts["gold"], charts["gold"], reference_base_result=0.5))

    def test_compare_image_list_names_the_image_and_the_count(self, charts):
        passed(run("compare_image_list", [charts["big"], charts["gold"]], [charts["gold"], charts["gold"]]))
        failed(run("compare_image_list", [charts["gold"], charts["pie_big"]], [charts["gold"], charts["gold"]]),
               THRESHOLD_NOT_MET, "image 2 of 2: similarity")
        failed(run("compare_image_list", [charts["gold"]], [charts["gold"], charts["gold"]]),
               STRUCTURE_MISMATCH, "1 result images for 2 expected")
        failed(run("compare_image_list", [], [charts["gold"]]), MISSING_RESULT, "no result images (an empty list)")


# --------------------------------------------------------------------------- GIMP edits

@pytest.fixture
def save(tmp_path):
    def _save(name: str, im: Image.Image, **options) -> Path:
        im.save(tmp_path / name, **options)
        return tmp_path / name
    return _save


@pytest.fixture
def original(save):
    return save("original.png", photo())


#: metric, a right result (built from the original picture), a wrong one, the wrong one's kind and text parts
GIMP_CASES = [
    ("check_structure_sim", photo, other_photo, THRESHOLD_NOT_MET,
     ("structure SSIM of the result against the expected image 0.", "< 0.9: not the same picture")),
    ("check_structure_sim", photo, lambda: photo().resize((320, 240)), STRUCTURE_MISMATCH,
     ("image sizes differ: result 320x240, expected 160x120",)),
    ("check_structure_sim_with_threshold", lambda: photo().resize((320, 240)), lambda: other_photo().resize((320, 240)),
     THRESHOLD_NOT_MET, ("structure SSIM of the result scaled from 320x240 to 160x120 against the expected image",
                         "< 0.85")),
    ("check_structure_sim_resized", lambda: layer_resized(photo()), lambda: layer_resized(other_photo()),
     THRESHOLD_NOT_MET, ("the result's visible content (80x60) scaled to 160x120", "< 0.9")),
    ("check_structure_sim_resized", lambda: layer_resized(photo()), lambda: Image.new("RGBA", SIZE, (0, 0, 0, 0)),
     STRUCTURE_MISMATCH, ("the result image (160x120) is fully transparent",)),
    ("check_brightness_decrease_and_structure_sim", lambda: scaled(photo(), 0.7), lambda: scaled(photo(), 1.2),
     RULE_FAILED, ("the brightness did not decrease: original 1", ", result 1")),
    ("check_brightness_decrease_and_structure_sim", lambda: scaled(photo(), 0.7), lambda: scaled(other_photo(), 0.7),
     THRESHOLD_NOT_MET, ("brightness-normalized MSE of the result against the original 0.", ">= 0.03")),
    ("check_contrast_increase_and_structure_sim", lambda: contrasted(photo(), 1.5), lambda: contrasted(photo(), 0.6),
     RULE_FAILED, ("the contrast did not increase: original",)),
    ("check_contrast_increase_and_structure_sim", lambda: contrasted(photo(), 1.5),
     lambda: contrasted(other_photo(), 1.8), THRESHOLD_NOT_MET, ("structure SSIM of the result", "< 0.65")),
    ("check_saturation_increase_and_structure_sim", lambda: saturated(photo(), 1.5), lambda: saturated(photo(), 0.5),
     RULE_FAILED, ("the saturation did not increase",)),
    ("check_saturation_increase_and_structure_sim", lambda: saturated(photo(), 1.5),
     lambda: saturated(other_photo(), 1.5), THRESHOLD_NOT_MET, ("of the hue", "both must be >= 0.9")),
    ("check_palette_and_structure_sim", lambda: photo().convert("P", palette=Image.Palette.ADAPTIVE),
     photo, VALUE_MISMATCH, ("image mode: expected P (palette-based, indexed), got RGB",)),
    ("check_palette_and_structure_sim", lambda: photo().convert("P", palette=Image.Palette.ADAPTIVE),
     lambda: other_photo().convert("P", palette=Image.Palette.ADAPTIVE), THRESHOLD_NOT_MET,
     ("structure SSIM of the result", "< 0.9")),
    ("check_image_mirror", lambda: ImageOps.mirror(photo()), photo, THRESHOLD_NOT_MET,
     ("structure SSIM of the result flipped back left-right against the expected image", "< 0.99")),
    ("check_file_exists_and_structure_sim", photo, other_photo, THRESHOLD_NOT_MET,
     ("structure SSIM of the result", "< 0.9")),
]


class TestGimpEdits:
    @pytest.mark.parametrize("name,right,wrong,kind,parts", GIMP_CASES, ids=[c[0] for c in GIMP_CASES])
    def test_right_and_wrong_edit(self, save, original, name, right, wrong, kind, parts):
        passed(run(name, save("right.png", right()), original))
        failed(run(name, save("wrong.png", wrong()), original), kind, *parts)

    @pytest.mark.parametrize("name", sorted({c[0] for c in GIMP_CASES}))
    def test_missing_or_unreadable_result(self, tmp_path, original, name):
        failed(run(name, None, original), MISSING_RESULT, "there is no result image (None)")
        failed(run(name, tmp_path / "export.jpg", original), MISSING_RESULT,
               f"the result image {tmp_path / 'export.jpg'} does not exist")
        (tmp_path / "junk.png").write_text("not a png")
        failed(run(name, tmp_path / "junk.png", original), UNREADABLE_RESULT,
               "the result file junk.png is not a readable image")

    def test_a_jpeg_export_passes(self, save, original):
        passed(run("check_file_exists_and_structure_sim", save("export.jpg", photo(), quality=95), original))

    def test_green_background(self, save):
        white = save("white.png", object_on((255, 255, 255)))
        passed(run("check_green_background", save("green.png", object_on((40, 200, 60))), white))
        failed(run("check_green_background", save("red.png", object_on((220, 30, 30))), white), RULE_FAILED,
               "background pixels are not green (G above R and B); the first at x 0, y 0 is RGB (220, 30, 30)")
        failed(run("check_green_background", save("big.png", object_on((40, 200, 60)).resize((320, 240))), white),
               STRUCTURE_MISMATCH, "image sizes differ: result 320x240, expected 160x120")
        failed(run("check_green_background", None, white), MISSING_RESULT, "there is no result image")

    def test_triangle_position(self, save, tmp_path):
        passed(run("check_triangle_position", save("middle.png", triangle((80, 60)))))
        failed(run("check_triangle_position", save("side.png", triangle((30, 60)))), THRESHOLD_NOT_MET,
               "the shape's centroid is 49.5 px left of and 0.6 px below the centre of the 160x120 image; "
               "at most 8.0 px and 6.0 px (5%) allowed")
        failed(run("check_triangle_position", save("low.png", triangle((80, 95)))), THRESHOLD_NOT_MET,
               "0.5 px right of and 35.6 px below the centre")
        failed(run("check_triangle_position", save("blank.png", Image.new("RGB", SIZE, (30, 60, 160)))),
               STRUCTURE_MISMATCH, "the result image (160x120) is one colour: there is no shape")
        failed(run("check_triangle_position", tmp_path / "gone.png"), MISSING_RESULT, "gone.png does not exist")


# --------------------------------------------------------------------------- GIMP files: size, config, OCR

class TestGimpFiles:
    def test_image_size(self, save):
        resized = save("resized.png", layer_resized(photo()))
        passed(run("check_image_size", resized, {"width": 80, "height": 60, "ignore_transparent": True}))
        failed(run("check_image_size", resized, {"height": 60}), VALUE_MISMATCH,
               "height of the image: expected 60 px, got 120 px (measured 160x120)")
        failed(run("check_image_size", resized, {"width": 100, "ignore_transparent": True}), VALUE_MISMATCH,
               "width of its non-transparent content: expected 100 px, got 80 px")
        failed(run("check_image_size", resized.parent / "gone.png", {"height": 60}), MISSING_RESULT, "gone.png")

    def test_image_file_size(self, original):
        size = original.stat().st_size
        passed(run("check_image_file_size", original, {"max_size": size + 1}))
        failed(run("check_image_file_size", original, {"max_size": size}), THRESHOLD_NOT_MET,
               f"the file original.png is {size} bytes, not under max_size {size}")
        failed(run("check_image_file_size", None, {"max_size": size}), MISSING_RESULT, "there is no result image")

    def test_config_status(self, tmp_path):
        rc = tmp_path / "gimprc"
        rc.write_text("# (undo-levels 200)\n(theme \"Light\")\n(undo-levels 100)\n")
        passed(run("check_config_status", rc, {"key": "undo-levels", "value": 100}))
        failed(run("check_config_status", rc, {"key": "undo-levels", "value": "50"}), RULE_FAILED,
               "no line sets undo-levels to '50'; line 3 is '(undo-levels 100)'")
        failed(run("check_config_status", rc, {"key": "show-menubar", "value": "no"}), RULE_FAILED,
               "no line sets show-menubar to 'no'; it is not set, or only in comments")
        failed(run("check_config_status", tmp_path / "sessionrc", {"key": "undo-levels", "value": "100"}),
               MISSING_RESULT, f"the config file {tmp_path / 'sessionrc'} does not exist")
        failed(run("check_config_status", None, {"key": "undo-levels", "value": "100"}), MISSING_RESULT,
               "there is no config file (None)")

    def test_image_text_missing_result(self, tmp_path):
        failed(run("compare_image_text", tmp_path / "shot.png", {"type": "text", "text": "Hello"}), MISSING_RESULT,
               "shot.png does not exist")

    @needs_tesseract
    def test_image_text(self, tmp_path):
        im = Image.new("RGB", (900, 160), (245, 240, 225))
        font = ImageFont.truetype(str(FONT), 56) if FONT.exists() else ImageFont.load_default(size=56)
        ImageDraw.Draw(im).text((40, 40), "Hello GIMP World", font=font, fill=(20, 20, 60))
        im.save(tmp_path / "text.png")
        passed(run("compare_image_text", tmp_path / "text.png", {"type": "text", "text": "GIMP World"}))
        failed(run("compare_image_text", tmp_path / "text.png", {"type": "text", "text": "Goodbye"}), RULE_FAILED,
               "the text OCR read in the image does not contain 'Goodbye'; it read 'Hello GIMP World'")


# --------------------------------------------------------------------------- MP3 tags, audio, video

@pytest.fixture(scope="module")
def media_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("media")
    out = {"tone": d / "tone.mp3", "tone440": d / "tone440.wav", "tone880": d / "tone880.wav"}
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", str(out["tone"]))
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", str(out["tone440"]))
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=880:duration=1", str(out["tone880"]))
    out["melody"] = write_wav(d / "melody.wav", melody(1))
    out["melody_cut"] = d / "melody_cut.mp3"
    ffmpeg("-i", str(out["melody"]), "-t", "1.5", str(out["melody_cut"]))
    out["junk"] = d / "junk.mp3"
    out["junk"].write_bytes(b"\x00garbage" * 10)
    out["video"] = write_video(d / "gold.avi", frames())
    out["flipped"] = write_video(d / "flipped.avi", frames(flip=True))
    out["short"] = write_video(d / "short.avi", frames(12))
    out["video_mp4"] = d / "gold.mp4"
    ffmpeg("-i", str(out["video"]), "-c:v", "mpeg4", "-q:v", "4", "-s", "192x128", str(out["video_mp4"]))
    return out


class TestMedia:
    RULES = {"title": {"method": "eq", "ref": "Swing"}, "artist": {"method": "re", "ref": "^Hiroshi"}}

    def test_mp3_tags(self, tmp_path, media_files):
        passed(run("check_mp3_meta", tagged(tmp_path, media_files["tone"], title="Swing", artist="Hiroshi K"),
                   self.RULES))
        failed(run("check_mp3_meta", tagged(tmp_path, media_files["tone"], title="Swung", artist="Hiroshi K"),
                   self.RULES), VALUE_MISMATCH, "ID3 tag title: expected eq 'Swing', got 'Swung'")
        failed(run("check_mp3_meta", tagged(tmp_path, media_files["tone"], title="Swing", artist="Someone"),
                   self.RULES), RULE_FAILED, "ID3 tag artist: expected re '^Hiroshi', got 'Someone'")
        failed(run("check_mp3_meta", tmp_path / "absent.mp3", self.RULES), MISSING_RESULT,
               f"the MP3 file {tmp_path / 'absent.mp3'} does not exist")
        failed(run("check_mp3_meta", None, self.RULES), MISSING_RESULT, "there is no MP3 file (None)")

    def test_audio(self, tmp_path, media_files):
        passed(run("compare_audios", media_files["tone"], media_files["tone440"]))
        failed(run("compare_audios", media_files["tone880"], media_files["tone440"]), THRESHOLD_NOT_MET,
               "audio similarity 0.", "< threshold 0.8 (result 1.00 s, expected 1.00 s)")
        failed(run("compare_audios", media_files["melody_cut"], media_files["melody"]), THRESHOLD_NOT_MET,
               "< threshold 0.8 (result 1.5", "expected 3.00 s)")
        failed(run("compare_audios", media_files["junk"], media_files["tone440"]), UNREADABLE_RESULT,
               "ffmpeg cannot decode the result audio file junk.mp3")
        failed(run("compare_audios", tmp_path / "absent.mp3", media_files["tone440"]), MISSING_RESULT,
               f"the result audio file {tmp_path / 'absent.mp3'} does not exist")
        failed(run("compare_audios", GuestText("/tmp/x.mp3"), media_files["tone440"]), MISSING_RESULT,
               "/tmp/x.mp3 does not exist")

    def test_video(self, tmp_path, media_files):
        passed(run("compare_videos", media_files["video_mp4"], media_files["video"]))
        failed(run("compare_videos", media_files["flipped"], media_files["video"]), THRESHOLD_NOT_MET,
               "6 of the first 6 frames differ, more than max_mismatched_frames 5; the first, frame 1, "
               "by a hash distance of")
        failed(run("compare_videos", media_files["short"], media_files["video"]), STRUCTURE_MISMATCH,
               "the result video ends after 12 frames, the other does not (max_frames_to_check 100)")
        failed(run("compare_videos", media_files["junk"], media_files["video"]), UNREADABLE_RESULT,
               "OpenCV cannot read a frame of the result video junk.mp3")
        failed(run("compare_videos", None, media_files["video"]), MISSING_RESULT, "there is no result video file")


# --------------------------------------------------------------------------- VLC

#: metric, vlcrc key, rule key, a value that differs from VLC's default, VLC's default
SETTINGS = [
    ("check_qt_bgcone", "qt-bgcone", "expected_qt_bgcone", 0, 1),
    ("check_qt_max_volume", "qt-max-volume", "expected_qt_max_volume", 200, 125),
    ("check_qt_minimal_view", "qt-minimal-view", "expected_qt_minimal_view", 1, 0),
    ("check_one_instance_when_started_from_file", "one-instance-when-started-from-file",
     "expected_one_instance_when_started_from_file", 0, 1),
    ("check_play_and_exit", "play-and-exit", "expected_play_and_exit", 1, 0),
]


class TestVlcSettings:
    @pytest.mark.parametrize("name,key,rule_key,changed,default", SETTINGS, ids=[s[0] for s in SETTINGS])
    def test_setting(self, tmp_path, name, key, rule_key, changed, default):
        passed(run(name, vlcrc(tmp_path, f"{key}={changed}"), {rule_key: changed}))
        failed(run(name, vlcrc(tmp_path, f"{key}={default}"), {rule_key: changed}), VALUE_MISMATCH,
               f"vlcrc {key}: expected {changed}, got '{default}'")
        failed(run(name, vlcrc(tmp_path, f"#{key}={changed}"), {rule_key: changed}), VALUE_MISMATCH,
               f"vlcrc {key}: expected {changed}, got '{default}' (not set: VLC's default)")
        failed(run(name, tmp_path / "absent" / "vlcrc", {rule_key: changed}), MISSING_RESULT,
               f"the vlcrc {tmp_path / 'absent' / 'vlcrc'} does not exist")
        failed(run(name, None, {rule_key: changed}), MISSING_RESULT, "there is no vlcrc (None)")

    def test_global_key_play_pause(self, tmp_path):
        name = "check_global_key_play_pause"
        passed(run(name, vlcrc(tmp_path, "global-key-play-pause=Ctrl+Space"), {"expected_global_key_play_pause": 1}))
        failed(run(name, vlcrc(tmp_path, "global-key-play-pause="), {"expected_global_key_play_pause": 1}),
               VALUE_MISMATCH, "vlcrc global-key-play-pause: expected a key, got ''")
        failed(run(name, vlcrc(tmp_path, "global-key-play-pause=Ctrl+Space"), {"expected_global_key_play_pause": 0}),
               VALUE_MISMATCH, "expected no key, got 'Ctrl+Space'")
        failed(run(name, vlcrc(tmp_path, "global-key-play-pause=Ctrl+Space"),
                   {"expected_global_key_play_pause": "Media Play Pause"}),
               VALUE_MISMATCH, "expected 'Media Play Pause', got 'Ctrl+Space'")
        failed(run(name, None, {"expected_global_key_play_pause": 1}), MISSING_RESULT, "there is no vlcrc")

    def test_slider_colours(self, tmp_path):
        name, dark = "check_qt_slider_colours", "20;20;20;40;40;40;60;60;60;10;0;90"
        passed(run(name, vlcrc(tmp_path, f"qt-slider-colours={dark}"), {"type": "blackish"}))
        failed(run(name, vlcrc(tmp_path), {"type": "blackish"}), RULE_FAILED,
               "(not set: VLC's default): colour stop 1 (153, 210, 153) is not black-ish (every channel under 100)")
        failed(run(name, vlcrc(tmp_path, "qt-slider-colours=20;20;20;40;40;40;60;60;60;10;0;100"),
                   {"type": "blackish"}), RULE_FAILED, "colour stop 4 (10, 0, 100) is not black-ish")
        passed(run(name, vlcrc(tmp_path, f"qt-slider-colours={dark}"),
                   {"type": "match", "expected_qt_slider_colours": dark}))
        failed(run(name, vlcrc(tmp_path), {"type": "match", "expected_qt_slider_colours": dark}), VALUE_MISMATCH,
               f"vlcrc qt-slider-colours: expected '{dark}', got '153;210;153")
        failed(run(name, vlcrc(tmp_path, "qt-slider-colours=black"), {"type": "blackish"}), VALUE_MISMATCH,
               "vlcrc qt-slider-colours: 'black' is not a list of r;g;b colour stops")

    def test_recordings_folder(self, tmp_path):
        rule = {"recording_file_path": "/home/user/Desktop"}
        passed(run("is_vlc_recordings_folder", vlcrc(tmp_path, "input-record-path=/home/user/Desktop/"), rule))
        failed(run("is_vlc_recordings_folder", vlcrc(tmp_path, "input-record-path=/home/user/Videos"), rule),
               VALUE_MISMATCH, "vlcrc input-record-path: expected '/home/user/Desktop', got '/home/user/Videos'")
        failed(run("is_vlc_recordings_folder", vlcrc(tmp_path), rule), VALUE_MISMATCH, "got '' (not set)")
        failed(run("is_vlc_recordings_folder", tmp_path / "gone", rule), MISSING_RESULT, "gone does not exist")


class TestVlcState:
    RULE = {"type": "file_name", "file_name": "clip.mp4"}

    def test_playing(self, tmp_path):
        status = tmp_path / "status.xml"
        status.write_text(status_xml("playing", filename="clip.mp4"))
        passed(run("is_vlc_playing", status, self.RULE))
        failed(run("is_vlc_playing", status_xml("playing", filename="other.mp4"), self.RULE), VALUE_MISMATCH,
               "VLC is playing ['other.mp4'], not the file name 'clip.mp4'")
        failed(run("is_vlc_playing", status_xml("paused", filename="clip.mp4"), self.RULE), VALUE_MISMATCH,
               "VLC's state: expected 'playing', got 'paused'")
        failed(run("is_vlc_playing", "<html>401 Unauthorized", self.RULE), UNREADABLE_RESULT,
               "the VLC status is not XML")
        failed(run("is_vlc_playing", tmp_path / "gone.xml", self.RULE), MISSING_RESULT,
               f"the VLC status {tmp_path / 'gone.xml'} does not exist")
        failed(run("is_vlc_playing", None, self.RULE), MISSING_RESULT, "there is no VLC status (None)")

    def test_fullscreen(self):
        passed(run("is_vlc_fullscreen", {"width": 1920, "height": 1080}, [1920, 1080]))
        failed(run("is_vlc_fullscreen", (1920, 1080), (1280, 720)), VALUE_MISMATCH,
               "the sizes differ: result 1920x1080, expected 1280x720")
        failed(run("is_vlc_fullscreen", (1920, 1080), None), MISSING_RESULT, "there is no expected size")
        failed(run("is_vlc_fullscreen", "no window", (1920, 1080)), UNREADABLE_RESULT,
               "the result is not a size {width, height}: 'no window'")
