"""Media metrics: MP3 tags and audio/video comparisons.

Audio is decoded with the ``ffmpeg`` command, videos are read with OpenCV, MP3 tags with mutagen;
the last two are imported when a metric needs them. VLC's own settings and state are in
:mod:`desktop_env.evaluators.metrics.vlc`.
"""
from __future__ import annotations

import difflib
import logging
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from desktop_env.evaluators.metrics.utils import (MetricError, OptionError, as_existing_path, check_rule_method,
                                                 expected_value, match_value_to_rule, rule_kind, rule_mismatch)
from desktop_env.evaluators.reasons import (MISSING_RESULT, STRUCTURE_MISMATCH, THRESHOLD_NOT_MET, UNREADABLE_RESULT,
                                            fail)
from desktop_env.registry import METRICS

logger = logging.getLogger(__name__)


def _missing(value: Any, what: str) -> float:
    """0, explained: the result file ``what`` at ``value`` (None or a path) is not there."""
    return fail(MISSING_RESULT, f"there is no {what} (None)" if value is None else f"the {what} {value} does not exist")


# --------------------------------------------------------------------------- MP3 tags

def _easyid3():
    try:
        from mutagen.easyid3 import EasyID3  # pylint: disable=import-outside-toplevel
    except ImportError:
        from desktop_env.extras import package_hint  # pylint: disable=import-outside-toplevel

        raise MetricError(f"check_mp3_meta needs the mutagen package ({package_hint('mutagen', 'mutagen')})") from None
    return EasyID3


@METRICS.register()
def check_mp3_meta(result: Any, expected: Any) -> float:
    """1 when every ID3 tag rule holds on the MP3 ``result``.

    Args:
        result: the MP3 file.
        expected: ``{tag: {"method": M, "ref": R}}`` with mutagen's EasyID3 tag names (``title``,
            ``artist``, ``album``, ``date``, ``genre``, ``tracknumber``...); a tag's values are
            joined with commas and an absent tag reads as ``""``. Methods as in rule matching
            (``eq``, ``re``, ``str_eq``...).
    """
    easy_id3 = _easyid3()
    rules = expected_value(expected)
    if not isinstance(rules, dict) or not rules:
        raise MetricError(f"check_mp3_meta: the expected rules must be {{tag: {{'method': ..., 'ref': ...}}}}, "
                          f"got {expected!r}")
    valid = sorted(easy_id3.valid_keys.keys())
    for tag, rule in rules.items():
        if tag not in easy_id3.valid_keys:
            close = difflib.get_close_matches(str(tag), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MetricError(f"check_mp3_meta: {tag!r} is not an ID3 tag name{hint} (e.g. title, artist, album)")
        check_rule_method(rule, str(tag))
    path = as_existing_path(result)
    if path is None:
        logger.info("check_mp3_meta: the MP3 file is missing (%r)", result)
        return _missing(result, "MP3 file")
    from mutagen import MutagenError  # pylint: disable=import-outside-toplevel
    from mutagen.id3 import ID3NoHeaderError  # pylint: disable=import-outside-toplevel
    try:
        tags = easy_id3(path)
    except ID3NoHeaderError:
        tags = {}
    except (MutagenError, OSError) as exc:
        logger.info("check_mp3_meta: cannot read the tags of %s: %s", path, exc)
        return fail(UNREADABLE_RESULT, f"the ID3 tags of {path.name} cannot be read: {exc}")
    for tag, rule in rules.items():
        values = tags.get(tag, [])
        value = ",".join(values) if isinstance(values, list) else str(values)
        if not match_value_to_rule(value, rule):
            logger.info("check_mp3_meta: %s=%r does not match %s", tag, value, rule)
            return fail(rule_kind(rule), f"ID3 tag {tag}: {rule_mismatch(value, rule)}")
    return 1.0


# --------------------------------------------------------------------------- audio

#: default pass mark of compare_audios: the similarity (see _audio_similarity) of the two sounds
DEFAULT_AUDIO_THRESHOLD = 0.8

# Both sounds are decoded to mono at _RATE and cut into frames of _FRAME samples every _HOP; each
# frame's energy in _BANDS mel-spaced bands (60 Hz-7.6 kHz) in dB is its feature vector.
_RATE = 16000  # Hz
_FRAME, _HOP = 1024, 512  # samples: 64 ms frames every 32 ms
_BANDS = 40
_FLOOR_DB = 60.0  # a band more than this below the frame's loudest band is set to that floor
_SILENT_DB = 50.0  # a frame this far below the loudest frame of both sounds is silence
_MAX_SHIFT_S = 2.0  # seconds one sound may be shifted against the other to line them up
_STEADY_DB = 3.0  # RMS dB: a sound whose band energies vary less over time than this is steady (a tone)
_DECODE_TIMEOUT_S = 300


def _decode_audio(path: Path) -> np.ndarray | None:
    """The sound of ``path`` as mono float32 samples at ``_RATE``, or None when ffmpeg cannot decode it.

    Raises:
        MetricError: ffmpeg is not installed.
    """
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise MetricError("compare_audios needs the ffmpeg command on the host (apt-get install ffmpeg)")
    cmd = [ffmpeg, "-nostdin", "-v", "error", "-i", str(path), "-vn", "-ac", "1", "-ar", str(_RATE),
           "-f", "f32le", "-"]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=_DECODE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        logger.info("decoding %s took over %d s", path, _DECODE_TIMEOUT_S)
        return None
    if proc.returncode != 0:
        logger.info("ffmpeg cannot decode %s: %s", path, proc.stderr.decode(errors="replace").strip()[-500:])
        return None
    samples = np.frombuffer(proc.stdout, dtype="<f4")
    return samples if samples.size else None


def _mel_filters() -> np.ndarray:
    """Triangular filters, ``(_BANDS, _FRAME // 2 + 1)``, on the mel scale."""
    def mel(hz):
        return 2595.0 * np.log10(1.0 + hz / 700.0)

    def hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    edges = hz(np.linspace(mel(60.0), mel(7600.0), _BANDS + 2))
    freqs = np.fft.rfftfreq(_FRAME, 1.0 / _RATE)
    rising = (freqs[None, :] - edges[:-2, None]) / (edges[1:-1, None] - edges[:-2, None])
    falling = (edges[2:, None] - freqs[None, :]) / (edges[2:, None] - edges[1:-1, None])
    return np.clip(np.minimum(rising, falling), 0.0, None)


def _audio_features(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: the band energies in dB (floored ``_FLOOR_DB`` under the frame's top band) and the loudness in dB."""
    if samples.size < _FRAME:
        samples = np.pad(samples, (0, _FRAME - samples.size))
    count = 1 + (samples.size - _FRAME) // _HOP
    window = np.hanning(_FRAME).astype(np.float32)
    filters = _mel_filters().T.astype(np.float32)
    bands, loudness = [], []
    for start in range(0, count, 2048):  # frames in chunks: bounded memory for long songs
        idx = np.arange(_FRAME)[None, :] + _HOP * np.arange(start, min(count, start + 2048))[:, None]
        power = np.abs(np.fft.rfft(samples[idx] * window, axis=1)) ** 2
        bands.append(power @ filters)
        loudness.append(power.sum(axis=1))
    db = 10.0 * np.log10(np.concatenate(bands) + 1e-10)
    db = np.maximum(db, db.max(axis=1, keepdims=True) - _FLOOR_DB)
    return db, 10.0 * np.log10(np.concatenate(loudness) + 1e-10)


def _best_shift(loud_a: np.ndarray, loud_b: np.ndarray) -> int:
    """Frames to drop from the start of a (positive) or b (negative) to line their loudness curves up.

    0 when either curve is flat (nothing to line up on); shifts are at most ``_MAX_SHIFT_S`` and a
    quarter of the shorter sound, and a smaller shift wins a near tie.
    """
    if loud_a.std() < 1.0 or loud_b.std() < 1.0:
        return 0
    limit = min(int(_MAX_SHIFT_S * _RATE / _HOP), min(loud_a.size, loud_b.size) // 4)
    best, best_shift = -np.inf, 0
    for shift in range(-limit, limit + 1):
        x, y = (loud_a[shift:], loud_b) if shift >= 0 else (loud_a, loud_b[-shift:])
        n = min(x.size, y.size)
        x, y = x[:n], y[:n]
        if n < 2 or x.std() < 1e-6 or y.std() < 1e-6:
            continue
        score = float(np.corrcoef(x, y)[0, 1]) - 0.001 * abs(shift)
        if score > best:
            best, best_shift = score, shift
    return best_shift


def _cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-9)


def _audio_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """How alike two sounds are, in [0, 1], after lining them up (up to ``_MAX_SHIFT_S``).

    The lower of two views:

    - spectral shape: per frame, the cosine of the band energies (each less its mean, so loudness
      does not count); silence matches silence only; frames beyond the overlap count 0, so a
      sound much shorter or longer than the other scores low;
    - time course: the correlation of the band energies less each band's mean over the sound,
      i.e. the notes and beats; skipped when both sounds are steady (plain tones).
    """
    bands_a, loud_a = _audio_features(a)
    bands_b, loud_b = _audio_features(b)
    shift = _best_shift(loud_a, loud_b)
    xa, xb = (bands_a[shift:], bands_b) if shift >= 0 else (bands_a, bands_b[-shift:])
    la, lb = (loud_a[shift:], loud_b) if shift >= 0 else (loud_a, loud_b[-shift:])
    n = min(len(xa), len(xb))
    xa, xb, la, lb = xa[:n], xb[:n], la[:n], lb[:n]
    silent = max(loud_a.max(), loud_b.max()) - _SILENT_DB
    quiet_a, quiet_b = la < silent, lb < silent
    shape = np.clip(_cosine_rows(xa - xa.mean(axis=1, keepdims=True), xb - xb.mean(axis=1, keepdims=True)), 0, 1)
    per_frame = np.where(quiet_a & quiet_b, 1.0, np.where(quiet_a | quiet_b, 0.0, shape))
    shape_score = float(per_frame.sum()) / max(len(bands_a), len(bands_b))
    da, db = xa - bands_a.mean(axis=0), xb - bands_b.mean(axis=0)
    steady = math.sqrt(float((da ** 2).mean())) < _STEADY_DB and math.sqrt(float((db ** 2).mean())) < _STEADY_DB
    time_score = 1.0 if steady else max(0.0, float((da * db).sum() / (np.linalg.norm(da) * np.linalg.norm(db) + 1e-9)))
    logger.info("audio similarity: shift %d frames, spectral shape %.3f, time course %s", shift, shape_score,
                "steady" if steady else f"{time_score:.3f}")
    return min(shape_score, time_score)


def _check_threshold(metric: str, threshold: Any) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise OptionError(f"{metric}: must be a number between 0 and 1, got {threshold!r}", "threshold")
    return float(threshold)


def check_audio_options(options: dict) -> None:
    """Validate ``compare_audios`` options when a task is loaded.

    Raises:
        OptionError: a threshold that is not a number in [0, 1].
    """
    _check_threshold("compare_audios", options.get("threshold", DEFAULT_AUDIO_THRESHOLD))


@METRICS.register(check=check_audio_options)
def compare_audios(result: Any, expected: Any, threshold: float = DEFAULT_AUDIO_THRESHOLD) -> float:
    """1 when the audio file ``result`` sounds like the gold ``expected`` (any formats ffmpeg decodes).

    Both are decoded to 16 kHz mono and compared on mel-band spectra, frame by frame, after lining
    them up (up to 2 s): the spectral shape of each frame and the time course of the bands (notes,
    beats) must both agree, and a much shorter or longer sound scores low. Loudness and encoding
    (bitrate, sample rate, container) do not count.

    Args:
        threshold: the similarity in [0, 1] needed to pass (default 0.8; re-encodings of one
            recording score about 0.95 and more, different music or tones about 0.4 and less).
    """
    threshold = _check_threshold("compare_audios", threshold)
    gold = as_existing_path(expected)
    if gold is None:
        raise MetricError(f"compare_audios: the gold audio file {expected!r} does not exist")
    path = as_existing_path(result)
    if path is None:
        logger.info("compare_audios: the result audio file is missing (%r)", result)
        return _missing(result, "result audio file")
    want = _decode_audio(gold)
    if want is None:
        raise MetricError(f"compare_audios: ffmpeg cannot decode the gold audio file {gold}")
    got = _decode_audio(path)
    if got is None:
        return fail(UNREADABLE_RESULT, f"ffmpeg cannot decode the result audio file {path.name}")
    similarity = _audio_similarity(got, want)
    logger.info("compare_audios: similarity %.3f (threshold %.2f)", similarity, threshold)
    if similarity < threshold:
        return fail(THRESHOLD_NOT_MET, f"audio similarity {similarity:.3f} < threshold {threshold:g} "
                                       f"(result {got.size / _RATE:.2f} s, expected {want.size / _RATE:.2f} s)")
    return 1.0


# --------------------------------------------------------------------------- video

def _cv2():
    try:
        import cv2  # pylint: disable=import-outside-toplevel
    except ImportError:
        from desktop_env.extras import package_hint  # pylint: disable=import-outside-toplevel

        raise MetricError(f"compare_videos needs OpenCV ({package_hint('cv2', 'opencv-python-headless')})") from None
    return cv2


def _frame_hash(cv2, frame: np.ndarray) -> np.ndarray:
    """A 64-bit perceptual hash of a frame: the signs, against their median, of its 8x8 lowest DCT frequencies."""
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(gray, (32, 32), interpolation=cv2.INTER_AREA).astype(np.float32)
    low = cv2.dct(small)[:8, :8]
    return (low > np.median(low)).ravel()


def _check_count(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise OptionError(f"compare_videos: must be a whole number >= {least}, got {value!r}", name)
    return value


def check_video_options(options: dict) -> None:
    """Validate ``compare_videos`` options when a task is loaded.

    Raises:
        OptionError: a frame count or threshold that is not a whole number in range.
    """
    _check_count("max_frames_to_check", options.get("max_frames_to_check", 100), 1)
    _check_count("threshold", options.get("threshold", 10), 0)
    _check_count("max_mismatched_frames", options.get("max_mismatched_frames", 5), 0)


@METRICS.register(check=check_video_options)
def compare_videos(result: Any, expected: Any, max_frames_to_check: int = 100, threshold: int = 10,
                   max_mismatched_frames: int = 5) -> float:
    """1 when the video ``result`` shows the same frames as the gold ``expected``, frame by frame.

    The first ``max_frames_to_check`` frames of both are compared through a 64-bit perceptual hash
    (resolution, codec and mild re-encoding do not count; a flipped, rotated or different picture
    does). One video ending before the other within those frames fails.

    Args:
        max_frames_to_check: frames compared from the start (default 100).
        threshold: the largest hash distance (of 64 bits) at which two frames are the same (default
            10: re-encoding and resizing move a frame's hash by about 6 bits at most, a flipped or
            another picture by about 32).
        max_mismatched_frames: how many frames may differ and still pass (default 5).
    """
    cv2 = _cv2()
    limit = _check_count("max_frames_to_check", max_frames_to_check, 1)
    distance = _check_count("threshold", threshold, 0)
    allowed = _check_count("max_mismatched_frames", max_mismatched_frames, 0)
    gold = as_existing_path(expected)
    if gold is None:
        raise MetricError(f"compare_videos: the gold video file {expected!r} does not exist")
    path = as_existing_path(result)
    if path is None:
        logger.info("compare_videos: the result video file is missing (%r)", result)
        return _missing(result, "result video file")
    got, want = cv2.VideoCapture(str(path)), cv2.VideoCapture(str(gold))
    try:
        ok_got, frame_got = got.read()
        ok_want, frame_want = want.read()
        if not ok_want:
            raise MetricError(f"compare_videos: OpenCV cannot read a frame of the gold video {gold}")
        if not ok_got:
            logger.info("compare_videos: no frame can be read from %s", path)
            return fail(UNREADABLE_RESULT, f"OpenCV cannot read a frame of the result video {path.name}")
        mismatched = checked = 0
        first = None  # the first differing frame (its number and hash distance), for the reason
        while ok_got and ok_want and checked < limit:
            checked += 1
            bits = int(np.count_nonzero(_frame_hash(cv2, frame_got) != _frame_hash(cv2, frame_want)))
            if bits > distance:
                mismatched += 1
                first = first or (checked, bits)
                if mismatched > allowed:
                    logger.info("compare_videos: more than %d of the first %d frames differ", allowed, checked)
                    return fail(THRESHOLD_NOT_MET, f"{mismatched} of the first {checked} frames differ, more than "
                                                   f"max_mismatched_frames {allowed}; the first, frame {first[0]}, "
                                                   f"by a hash distance of {first[1]} > threshold {distance}")
            ok_got, frame_got = got.read()
            ok_want, frame_want = want.read()
        if checked < limit and ok_got != ok_want:
            ended = "result" if ok_want else "expected"
            logger.info("compare_videos: the %s video ends after %d frames, the other does not", ended, checked)
            return fail(STRUCTURE_MISMATCH, f"the {ended} video ends after {checked} frames, the other does not "
                                            f"(max_frames_to_check {limit})")
        logger.info("compare_videos: %d frames compared, %d differ", checked, mismatched)
        return 1.0
    finally:
        got.release()
        want.release()
