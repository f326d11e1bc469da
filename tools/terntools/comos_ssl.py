"""`tern bench comos ssl`: seed 002's SSL + FBD application (apps/sslfbd,
docs/comos.md), its input signals, and evaluations 1, 2 and 5 of issue 12."""
from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

from terntools.comos import experiment
from terntools.errors import TernError

# --------------------------------------------------------------------------- signals
#
# apps/sslfbd's inputs, played into the simulated ADCs (docs/tern-sim.md,
# [[adc]]): one 10-bit code a conversion. A microphone converts only while a
# round's block fills, so each file is a sequence of 512-sample blocks, one
# per round; the temperature is converted once per FBD period. The files in
# docs/sim/signals/ are this generator's output (tools/tests/test_comos.py
# checks it); everything is derived from fixed seeds: no randomness at run time.

SSL_N = 512
SSL_FS = 8000.0
SOUND_M_S = 343.0
HALF_SIDE_M = 0.05
MICS = ((1, 1), (-1, 1), (-1, -1), (1, -1))  # x, y in half sides: apps/sslfbd/ssl_dsp.c
NOISE_ROUNDS = 4  # then VOICE_ROUNDS with a source at SOURCE_DEG
VOICE_ROUNDS = 4
SOURCE_DEG = 60
NOISE_CODES = 8.0  # white noise on every microphone, RMS
VOICE_CODES = 60.0  # the source, RMS at each microphone
VOICE_PARTIALS = 40  # sinusoids between 300 Hz and 2.5 kHz
# FBD: 25 degC = code 51 (10 mV/degC, 5 V reference); a one-sample spike
# (must not alert), then a fire (must), then back to normal (re-arms).
TEMPERATURE = [51, 52, 51, 50, 66, 51, 52, 61, 71, 81, 91, 101, 111, 121, 121, 121, 121] + [51] * 11
FBD_LEARN = 4
FBD_RISE = 10


def mic_signals() -> list[list[int]]:
    """Four channels: NOISE_ROUNDS blocks of noise, then VOICE_ROUNDS blocks of a
    source at SOURCE_DEG (far field, each microphone delayed exactly)."""
    rng = random.Random(2)
    partials = [(rng.uniform(300.0, 2500.0), rng.uniform(0.0, 2 * math.pi)) for _ in range(VOICE_PARTIALS)]
    amp = VOICE_CODES * math.sqrt(2.0 / VOICE_PARTIALS)
    th = math.radians(SOURCE_DEG)
    # arrival delay at microphone m, in samples: earlier where it faces the source
    tau = [-(x * HALF_SIDE_M * math.cos(th) + y * HALF_SIDE_M * math.sin(th)) / SOUND_M_S * SSL_FS for x, y in MICS]
    out: list[list[int]] = [[] for _ in MICS]
    for r in range(NOISE_ROUNDS + VOICE_ROUNDS):
        for m in range(len(MICS)):
            for n in range(SSL_N):
                v = 512.0 + rng.gauss(0.0, NOISE_CODES)
                if r >= NOISE_ROUNDS:
                    t = (r * SSL_N + n - tau[m]) / SSL_FS
                    v += sum(amp * math.cos(2 * math.pi * f * t + ph) for f, ph in partials)
                out[m].append(min(1023, max(0, round(v))))
    return out


def expected_alerts(samples: int) -> list[int]:
    """The temperature samples (0, 1, ...) at which apps/sslfbd's Alert fires
    over `samples` samples of the looping TEMPERATURE: its integer EWMA and
    detector, step for step (ssl_dsp.c: fbd_ewma, fbd_alert)."""
    ewma, base, fire, alerts = 0, 0, False, []
    for seq in range(samples):
        x = TEMPERATURE[seq % len(TEMPERATURE)] << 4
        ewma = x if seq == 0 else ewma + ((x - ewma) >> 2)
        if seq + 1 < FBD_LEARN:
            continue
        if seq + 1 == FBD_LEARN:
            base = ewma
            continue
        rise = ewma - base
        if not fire and rise > FBD_RISE * 16:
            fire = True
            alerts.append(seq)
        elif fire and rise < FBD_RISE * 8:
            fire = False
    return alerts


def signal_files() -> dict[str, str]:
    """File name -> text, as in docs/sim/signals/."""
    files = {}
    for m, codes in enumerate(mic_signals()):
        head = (f"# apps/sslfbd microphone {m}: {NOISE_ROUNDS} blocks of noise, then {VOICE_ROUNDS} of a "
                f"source at {SOURCE_DEG} deg; 512 samples a block (tools/terntools/comos_ssl.py)\n")
        files[f"mic{m}.txt"] = head + "\n".join(str(c) for c in codes) + "\n"
    files["temp.txt"] = ("# apps/sslfbd temperature at 4 Hz, codes (25 degC = 51): a spike, a fire, normal again "
                         "(tools/terntools/comos_ssl.py)\n" + "\n".join(str(c) for c in TEMPERATURE) + "\n")
    return files


def write_signals(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in signal_files().items():
        (directory / name).write_text(text)


# --------------------------------------------------------------------------- ssl


def _ssl_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=4, help="SSL rounds per run (default %(default)s)")


@experiment("ssl", help="evaluations 1, 2 and 5: the SSL + FBD application on one and five modules",
            description="Run apps/sslfbd (seed 002 Fig. 4) on one module and on five (Fig. 8) and its "
            "standalone build: messaging overhead (Tables II, V), per-message latency by destination (Fig. 6), "
            "FBD's alert chain while the FFT runs (section VI-F).",
            add_arguments=_ssl_arguments)
def run_ssl(args: argparse.Namespace) -> int:
    raise TernError("the SSL + FBD application (apps/sslfbd) has not landed yet: issue 12, evaluation 1")
