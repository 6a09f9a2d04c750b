"""VLC, MP3-tag, audio and video metrics on real files: vlcrc texts, VLC status XML, ffmpeg-made sounds,
mutagen-tagged MP3s and OpenCV-written videos."""
from __future__ import annotations

import subprocess
import wave
from pathlib import Path

import cv2
import numpy as np
import pytest
from mutagen.easyid3 import EasyID3

from desktop_env.evaluators.metrics.media import (
    check_audio_options, check_mp3_meta, check_video_options, compare_audios, compare_videos,
)
from desktop_env.evaluators.metrics.vlc import (
    check_global_key_play_pause, check_one_instance_when_started_from_file, check_play_and_exit, check_qt_bgcone,
    check_qt_max_volume, check_qt_minimal_view, check_qt_slider_colours, is_vlc_fullscreen, is_vlc_playing,
    is_vlc_recordings_folder,
)
from desktop_env.evaluators.metrics.utils import MetricError
from desktop_env.evaluators.values import GuestText


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-v", "error", *args], check=True)


# --------------------------------------------------------------------------- vlcrc

def vlcrc(tmp_path: Path, *lines: str) -> Path:
    """A vlcrc as VLC writes it: sections, comments, commented defaults, and the given settings."""
    body = ["\ufeff###", "###  vlc 3.0.16", "###", "", "[qt] # Qt interface", "",
            "# Show background cone (boolean)", "#qt-bgcone=1", "# Maximum volume (integer)", "#qt-max-volume=125",
            "#qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29",
            "[core] # core program", "#global-key-play-pause=", "#input-record-path=",
            "#one-instance-when-started-from-file=1", "#play-and-exit=0", *lines, ""]
    p = tmp_path / "vlcrc"
    p.write_text("\n".join(body), encoding="utf-8")
    return p


#: metric, vlcrc key, rule key, a value that differs from VLC's default, VLC's default
SETTINGS = [
    (check_qt_bgcone, "qt-bgcone", "expected_qt_bgcone", 0, 1),
    (check_qt_max_volume, "qt-max-volume", "expected_qt_max_volume", 200, 125),
    (check_qt_minimal_view, "qt-minimal-view", "expected_qt_minimal_view", 1, 0),
    (check_one_instance_when_started_from_file, "one-instance-when-started-from-file",
     "expected_one_instance_when_started_from_file", 0, 1),
    (check_play_and_exit, "play-and-exit", "expected_play_and_exit", 1, 0),
]
SETTING_IDS = [s[0].__name__ for s in SETTINGS]


class TestVlcSettings:
    @pytest.mark.parametrize("metric,key,rule_key,changed,default", SETTINGS, ids=SETTING_IDS)
    def test_set_value_passes(self, tmp_path, metric, key, rule_key, changed, default):
        assert metric(vlcrc(tmp_path, f"{key}={changed}"), {rule_key: changed}) == 1.0

    @pytest.mark.parametrize("metric,key,rule_key,changed,default", SETTINGS, ids=SETTING_IDS)
    def test_other_value_fails(self, tmp_path, metric, key, rule_key, changed, default):
        assert metric(vlcrc(tmp_path, f"{key}={default}"), {rule_key: changed}) == 0.0

    @pytest.mark.parametrize("metric,key,rule_key,changed,default", SETTINGS, ids=SETTING_IDS)
    def test_unset_or_commented_is_vlcs_default(self, tmp_path, metric, key, rule_key, changed, default):
        path = vlcrc(tmp_path, f"#{key}={changed}")
        assert metric(path, {rule_key: changed}) == 0.0
        assert metric(path, {rule_key: default}) == 1.0

    @pytest.mark.parametrize("metric,key,rule_key,changed,default", SETTINGS, ids=SETTING_IDS)
    def test_missing_result(self, metric, key, rule_key, changed, default):
        assert metric(None, {rule_key: changed}) == 0.0

    @pytest.mark.parametrize("metric,key,rule_key,changed,default", SETTINGS, ids=SETTING_IDS)
    def test_rule_without_its_key_is_an_error(self, tmp_path, metric, key, rule_key, changed, default):
        with pytest.raises(MetricError, match=rule_key):
            metric(vlcrc(tmp_path), {"expected": changed})

    def test_values_compare_as_numbers_and_booleans(self, tmp_path):
        assert check_qt_max_volume(vlcrc(tmp_path, "qt-max-volume=200"), {"expected_qt_max_volume": "200"}) == 1.0
        assert check_qt_max_volume(vlcrc(tmp_path, "qt-max-volume=150"), {"expected_qt_max_volume": "200"}) == 0.0
        assert check_qt_max_volume(vlcrc(tmp_path, "qt-max-volume=200"), {"expected_qt_max_volume": 200.0}) == 1.0
        assert check_qt_bgcone(vlcrc(tmp_path, "qt-bgcone=0"), {"expected_qt_bgcone": False}) == 1.0
        assert check_qt_bgcone(vlcrc(tmp_path, "qt-bgcone=0"), {"expected_qt_bgcone": True}) == 0.0

    def test_the_last_setting_wins_and_guest_text_is_read_as_text(self, tmp_path):
        assert check_play_and_exit(vlcrc(tmp_path, "play-and-exit=1", "play-and-exit=0"),
                                   {"expected_play_and_exit": 0}) == 1.0
        assert check_play_and_exit(GuestText("\ufeffplay-and-exit=1\r\n"), {"expected_play_and_exit": 1}) == 1.0

    def test_a_rule_value_must_be_a_scalar(self, tmp_path):
        with pytest.raises(MetricError, match="expected_qt_bgcone"):
            check_qt_bgcone(vlcrc(tmp_path), {"expected_qt_bgcone": [0]})


class TestGlobalKeyPlayPause:
    RULE = {"expected_global_key_play_pause": 1}

    def test_a_set_key_passes(self, tmp_path):
        assert check_global_key_play_pause(vlcrc(tmp_path, "global-key-play-pause=Ctrl+Space"), self.RULE) == 1.0

    def test_an_empty_key_fails(self, tmp_path):
        assert check_global_key_play_pause(vlcrc(tmp_path, "global-key-play-pause="), self.RULE) == 0.0
        assert check_global_key_play_pause(vlcrc(tmp_path), self.RULE) == 0.0
        assert check_global_key_play_pause(vlcrc(tmp_path), {"expected_global_key_play_pause": 0}) == 1.0

    def test_a_named_key(self, tmp_path):
        path = vlcrc(tmp_path, "global-key-play-pause=Ctrl+Space")
        assert check_global_key_play_pause(path, {"expected_global_key_play_pause": "ctrl+space"}) == 1.0
        assert check_global_key_play_pause(path, {"expected_global_key_play_pause": "Media Play Pause"}) == 0.0

    def test_missing_result(self):
        assert check_global_key_play_pause(None, self.RULE) == 0.0

    def test_bad_rule(self, tmp_path):
        with pytest.raises(MetricError, match="expected_global_key_play_pause"):
            check_global_key_play_pause(vlcrc(tmp_path), {"global_key": 1})


class TestSliderColours:
    DARK = "20;20;20;40;40;40;60;60;60;10;0;90"

    def test_blackish_passes(self, tmp_path):
        assert check_qt_slider_colours(vlcrc(tmp_path, f"qt-slider-colours={self.DARK}"), {"type": "blackish"}) == 1.0

    def test_default_or_one_bright_stop_is_not_blackish(self, tmp_path):
        assert check_qt_slider_colours(vlcrc(tmp_path), {"type": "blackish"}) == 0.0
        bright = "20;20;20;40;40;40;60;60;60;10;0;100"
        assert check_qt_slider_colours(vlcrc(tmp_path, f"qt-slider-colours={bright}"), {"type": "blackish"}) == 0.0

    def test_match(self, tmp_path):
        rule = {"type": "match", "expected_qt_slider_colours": self.DARK}
        assert check_qt_slider_colours(vlcrc(tmp_path, f"qt-slider-colours={self.DARK}"), rule) == 1.0
        assert check_qt_slider_colours(vlcrc(tmp_path), rule) == 0.0

    def test_malformed_setting_fails(self, tmp_path):
        assert check_qt_slider_colours(vlcrc(tmp_path, "qt-slider-colours=black"), {"type": "blackish"}) == 0.0

    def test_missing_result(self):
        assert check_qt_slider_colours(None, {"type": "blackish"}) == 0.0

    @pytest.mark.parametrize("rule", [{"type": "dark"}, {"type": "match"},
                                      {"type": "match", "expected_qt_slider_colours": "1;2"}, "blackish"])
    def test_bad_rule(self, tmp_path, rule):
        with pytest.raises(MetricError):
            check_qt_slider_colours(vlcrc(tmp_path), rule)


class TestRecordingsFolder:
    RULE = {"recording_file_path": "/home/user/Desktop"}

    def test_pass(self, tmp_path):
        assert is_vlc_recordings_folder(vlcrc(tmp_path, "input-record-path=/home/user/Desktop"), self.RULE) == 1.0
        assert is_vlc_recordings_folder(vlcrc(tmp_path, "input-record-path=/home/user/Desktop/"), self.RULE) == 1.0

    def test_fail(self, tmp_path):
        assert is_vlc_recordings_folder(vlcrc(tmp_path, "input-record-path=/home/user/Videos"), self.RULE) == 0.0
        assert is_vlc_recordings_folder(vlcrc(tmp_path, "#input-record-path=/home/user/Desktop"), self.RULE) == 0.0

    def test_missing_result(self):
        assert is_vlc_recordings_folder(None, self.RULE) == 0.0

    def test_bad_rule(self, tmp_path):
        with pytest.raises(MetricError, match="recording_file_path"):
            is_vlc_recordings_folder(vlcrc(tmp_path), {"path": "/home/user/Desktop"})


# --------------------------------------------------------------------------- VLC status, window

def status_xml(state: str, **meta: str) -> str:
    """VLC's /requests/status.xml, trimmed to what the metric reads plus some noise."""
    infos = "".join(f"<info name='{k}'>{v}</info>" for k, v in meta.items())
    return (f"<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\" ?>\n<root>"
            f"<fullscreen>false</fullscreen><volume>256</volume><state>{state}</state><version>3.0.16</version>"
            f"<information><category name=\"meta\">{infos}</category>"
            f"<category name=\"Stream 0\"><info name='Codec'>H264 - MPEG-4 AVC (part 10) (avc1)</info></category>"
            f"</information></root>")


class TestIsVlcPlaying:
    FILE = "Rick Astley - Never Gonna Give You Up (Official Music Video).mp4"
    URL = "https://devstreaming-cdn.apple.com/videos/streaming/examples/img_bipbop_adv_example_fmp4/master.m3u8"

    def test_file_name_passes(self, tmp_path):
        p = tmp_path / "status.xml"
        p.write_text(status_xml("playing", filename=self.FILE))
        assert is_vlc_playing(p, {"type": "file_name", "file_name": self.FILE}) == 1.0

    def test_file_url_passes(self):
        xml = status_xml("playing", uri="file:///home/user/Desktop/Rick%20Astley%20-%20Never%20Gonna%20Give%20You"
                                        "%20Up%20(Official%20Music%20Video).mp4")
        assert is_vlc_playing(GuestText(xml), {"type": "file_name", "file_name": self.FILE}) == 1.0

    def test_other_file_or_not_playing_fails(self):
        rule = {"type": "file_name", "file_name": self.FILE}
        assert is_vlc_playing(status_xml("playing", filename="Gen 2.mp4"), rule) == 0.0
        assert is_vlc_playing(status_xml("paused", filename=self.FILE), rule) == 0.0
        assert is_vlc_playing(status_xml("stopped"), rule) == 0.0
        assert is_vlc_playing("<html>401 Unauthorized", rule) == 0.0

    def test_stream_url(self):
        rule = {"type": "url", "url": self.URL}
        assert is_vlc_playing(status_xml("playing", filename="master.m3u8"), rule) == 1.0
        assert is_vlc_playing(status_xml("playing", url=self.URL), rule) == 1.0
        assert is_vlc_playing(status_xml("playing", filename="index.m3u8"), rule) == 0.0

    def test_missing_result(self):
        assert is_vlc_playing(None, {"type": "file_name", "file_name": self.FILE}) == 0.0

    @pytest.mark.parametrize("rule", [{"type": "title", "title": "x"}, {"type": "url"},
                                      {"type": "file_name", "file_name": ""}, ["file_name"]])
    def test_bad_rule(self, rule):
        with pytest.raises(MetricError):
            is_vlc_playing(status_xml("playing", filename=self.FILE), rule)


class TestIsVlcFullscreen:
    def test_same_size_passes(self):
        assert is_vlc_fullscreen({"width": 1920, "height": 1080}, {"width": 1920, "height": 1080}) == 1.0
        assert is_vlc_fullscreen((1920, 1080), [1920, 1080]) == 1.0
        assert is_vlc_fullscreen(GuestText('{"width": 1920, "height": 1080}'), (1920, 1080)) == 1.0

    def test_smaller_window_fails(self):
        assert is_vlc_fullscreen((1920, 1080), (1280, 720)) == 0.0

    def test_missing_window_or_screen(self):
        assert is_vlc_fullscreen((1920, 1080), None) == 0.0
        assert is_vlc_fullscreen(None, (1920, 1080)) == 0.0
        assert is_vlc_fullscreen("no window", (1920, 1080)) == 0.0


# --------------------------------------------------------------------------- MP3 tags

@pytest.fixture(scope="module")
def media_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def tone_mp3(media_dir):
    path = media_dir / "tone.mp3"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1", str(path))
    return path


def tagged(tmp_path: Path, source: Path, **tags: str) -> Path:
    path = tmp_path / "song.mp3"
    path.write_bytes(source.read_bytes())
    id3 = EasyID3(path)
    for key, value in tags.items():
        id3[key] = value
    id3.save()
    return path


class TestCheckMp3Meta:
    RULES = {"title": {"method": "eq", "ref": "Swing"}, "artist": {"method": "re", "ref": "^Hiroshi"}}

    def test_pass(self, tmp_path, tone_mp3):
        assert check_mp3_meta(tagged(tmp_path, tone_mp3, title="Swing", artist="Hiroshi Kitaoka"), self.RULES) == 1.0

    def test_fail(self, tmp_path, tone_mp3):
        assert check_mp3_meta(tagged(tmp_path, tone_mp3, title="Swing", artist="Someone"), self.RULES) == 0.0
        assert check_mp3_meta(tagged(tmp_path, tone_mp3, title="Swing"), self.RULES) == 0.0

    def test_several_values_are_joined_with_commas(self, tmp_path, tone_mp3):
        path = tagged(tmp_path, tone_mp3, artist=["A", "B"])
        assert check_mp3_meta(path, {"artist": {"method": "eq", "ref": "A,B"}}) == 1.0

    def test_missing_or_untagged_or_not_mp3(self, tmp_path, tone_mp3):
        assert check_mp3_meta(None, self.RULES) == 0.0
        assert check_mp3_meta(tmp_path / "absent.mp3", self.RULES) == 0.0
        assert check_mp3_meta(tone_mp3, self.RULES) == 0.0  # ffmpeg's tag holds no title
        text = tmp_path / "notes.mp3"
        text.write_text("not audio")
        assert check_mp3_meta(text, self.RULES) == 0.0

    @pytest.mark.parametrize("rules", [{"titel": {"method": "eq", "ref": "x"}},
                                       {"title": {"method": "equals", "ref": "x"}},
                                       {"title": "Swing"}, {}])
    def test_bad_rules(self, tone_mp3, rules):
        with pytest.raises(MetricError):
            check_mp3_meta(tone_mp3, rules)


# --------------------------------------------------------------------------- audio

def write_wav(path: Path, samples: np.ndarray, rate: int = 44100) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return path


def melody(seed: int, seconds: float = 3.0, rate: int = 44100) -> np.ndarray:
    """Random plucked notes with harmonics and clicks: sound that changes over time, like music."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    y = np.zeros_like(t)
    start = 0.0
    while start < seconds:
        length, freq = rng.uniform(0.15, 0.4), 110 * 2 ** (rng.integers(0, 36) / 12)
        on = (t >= start) & (t < start + length)
        env = np.exp(-(t[on] - start) * rng.uniform(2, 8))
        for harmonic in range(1, 5):
            y[on] += env * np.sin(2 * np.pi * freq * harmonic * t[on]) / harmonic
        start += length
    return 0.8 * y / np.abs(y).max()


@pytest.fixture(scope="module")
def sounds(media_dir):
    """Tones made by ffmpeg (wav and mp3) and two melodies (wav, and one as a low-bitrate mp3)."""
    out = {}
    for freq in (440, 880):
        out[f"tone{freq}.wav"] = media_dir / f"tone{freq}.wav"
        ffmpeg("-f", "lavfi", "-i", f"sine=frequency={freq}:duration=1", str(out[f"tone{freq}.wav"]))
    out["tone440.mp3"] = media_dir / "tone440_1s.mp3"
    ffmpeg("-i", str(out["tone440.wav"]), str(out["tone440.mp3"]))
    for seed in (1, 2):
        out[f"melody{seed}.wav"] = write_wav(media_dir / f"melody{seed}.wav", melody(seed))
    out["melody1.mp3"] = media_dir / "melody1.mp3"
    ffmpeg("-i", str(out["melody1.wav"]), "-ar", "22050", "-b:a", "48k", str(out["melody1.mp3"]))
    out["melody1_cut.mp3"] = media_dir / "melody1_cut.mp3"
    ffmpeg("-i", str(out["melody1.wav"]), "-t", "1.5", str(out["melody1_cut.mp3"]))
    return out


class TestCompareAudios:
    def test_same_tone_reencoded_passes(self, sounds):
        assert compare_audios(sounds["tone440.mp3"], sounds["tone440.wav"]) == 1.0

    def test_other_tone_fails(self, sounds):
        assert compare_audios(sounds["tone880.wav"], sounds["tone440.wav"]) == 0.0

    def test_same_melody_as_low_bitrate_mp3_passes(self, sounds):
        assert compare_audios(sounds["melody1.mp3"], sounds["melody1.wav"]) == 1.0

    def test_other_melody_or_a_cut_fails(self, sounds):
        assert compare_audios(sounds["melody2.wav"], sounds["melody1.wav"]) == 0.0
        assert compare_audios(sounds["melody1_cut.mp3"], sounds["melody1.wav"]) == 0.0
        assert compare_audios(sounds["tone440.wav"], sounds["melody1.wav"]) == 0.0

    def test_threshold(self, sounds):
        assert compare_audios(sounds["melody1_cut.mp3"], sounds["melody1.wav"], threshold=0.3) == 1.0

    def test_missing_or_undecodable_result(self, tmp_path, sounds):
        assert compare_audios(None, sounds["tone440.wav"]) == 0.0
        assert compare_audios(tmp_path / "absent.mp3", sounds["tone440.wav"]) == 0.0
        junk = tmp_path / "junk.mp3"
        junk.write_bytes(b"\x00garbage" * 10)
        assert compare_audios(junk, sounds["tone440.wav"]) == 0.0
        assert compare_audios(GuestText(str(sounds["tone440.wav"])), sounds["tone440.wav"]) == 0.0

    def test_bad_threshold_or_gold(self, tmp_path, sounds):
        with pytest.raises(MetricError, match="threshold"):
            compare_audios(sounds["tone440.wav"], sounds["tone440.wav"], threshold=80)
        with pytest.raises(MetricError, match="threshold"):
            check_audio_options({"threshold": "high"})
        with pytest.raises(MetricError, match="gold"):
            compare_audios(sounds["tone440.wav"], tmp_path / "absent.mp3")


# --------------------------------------------------------------------------- video

def frames(count: int = 24, flip: bool = False) -> list[np.ndarray]:
    """A square moving over a gradient with a bar at the top: nothing symmetric, so a flip shows."""
    out = []
    for i in range(count):
        img = np.tile(np.linspace(0, 160, 96, dtype=np.uint8), (64, 1))
        img = cv2.merge([img, img // 2, 255 - img])
        img[4:12, 8:88] = (0, 255, 255)
        x = 4 + 3 * i
        img[30:50, x:x + 20] = (255, 255, 255)
        out.append(cv2.flip(img, 0) if flip else img)
    return out


def write_video(path: Path, images: list[np.ndarray], fourcc: str = "MJPG") -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), 12.0, (96, 64))
    assert writer.isOpened()
    for img in images:
        writer.write(img)
    writer.release()
    return path


@pytest.fixture(scope="module")
def videos(media_dir):
    out = {"gold": write_video(media_dir / "gold.avi", frames()),
           "flipped": write_video(media_dir / "flipped.avi", frames(flip=True)),
           "short": write_video(media_dir / "short.avi", frames(12))}
    out["mp4"] = media_dir / "gold.mp4"
    ffmpeg("-i", str(out["gold"]), "-c:v", "mpeg4", "-q:v", "4", "-s", "192x128", str(out["mp4"]))
    return out


class TestCompareVideos:
    def test_reencoded_and_resized_passes(self, videos):
        assert compare_videos(videos["mp4"], videos["gold"]) == 1.0

    def test_flipped_fails(self, videos):
        assert compare_videos(videos["flipped"], videos["gold"]) == 0.0

    def test_ending_early_fails_unless_beyond_the_checked_frames(self, videos):
        assert compare_videos(videos["short"], videos["gold"]) == 0.0
        assert compare_videos(videos["short"], videos["gold"], max_frames_to_check=10) == 1.0

    def test_mismatches_allowed(self, videos):
        assert compare_videos(videos["flipped"], videos["gold"], max_mismatched_frames=24) == 1.0

    def test_a_zero_hash_distance_rejects_reencoding(self, videos):
        assert compare_videos(videos["mp4"], videos["gold"], threshold=0) == 0.0
        assert compare_videos(videos["gold"], videos["gold"], threshold=0, max_mismatched_frames=0) == 1.0

    def test_missing_or_unreadable_result(self, tmp_path, videos):
        assert compare_videos(None, videos["gold"]) == 0.0
        junk = tmp_path / "junk.mp4"
        junk.write_bytes(b"not a video")
        assert compare_videos(junk, videos["gold"]) == 0.0

    def test_bad_options_or_gold(self, tmp_path, videos):
        with pytest.raises(MetricError, match="max_frames_to_check"):
            compare_videos(videos["gold"], videos["gold"], max_frames_to_check=0)
        with pytest.raises(MetricError, match="threshold"):
            check_video_options({"threshold": 2.5})
        with pytest.raises(MetricError, match="gold"):
            compare_videos(videos["gold"], tmp_path / "absent.mp4")
