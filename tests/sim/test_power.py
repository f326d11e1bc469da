"""Processor power-down and seed 002's break-even idle policy (tern/power.h,
kernel/power.c, drivers/procbus/procbus_power.c, apps/power,
docs/sim/power.toml): five ATmega1284P modules on tern-sim's processor bus."""
from __future__ import annotations

import re
import shutil

import pytest

from scenario_run import ROOT, summary_counters, tern_sim

N_MSGS, ROUNDS = 20, 40  # apps/power/power.c
ASYNC_TICK = 20_000_000 // 32768 + 1  # cycles of the ATmega1284P at 20 MHz in a 32 kHz crystal's tick
T_BE = 16384  # cycles: module-m1284's board.h figures through TERN_BREAK_EVEN
POWER_DOWN, POWER_SAVE, IDLE = 2, 3, 0  # SM2..0, summary.json's sleep_by_mode

pytestmark = pytest.mark.skipif(shutil.which("avr-gcc") is None, reason="needs avr-gcc")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    r = tern_sim(ROOT / "docs" / "sim" / "power.toml", tmp_path_factory.mktemp("power"))
    nodes: dict[str, dict] = r["nodes"]
    for name, n in nodes.items():
        console = r["consoles"][name]
        assert n["status"] == "exit" and n["exit_status"] == 0, (name, console)
        n["counters"] = summary_counters(console)
        # the guest's clock, read last: what it lags tern-sim's cycle count by at the exit
        n["lag"] = n["cycles"] - int(re.findall(r"clock (\d+)", console)[-1])
    return nodes


def test_a_powered_down_processor_wakes_for_each_message_and_gets_it(run: dict[str, dict]) -> None:
    """Module 2 has nothing due between messages: once module 1 allowed it, it
    powers down, each bus frame wakes it, and every message reaches `sink`
    once and in order (it checks), and its reply reaches module 1 (checked)."""
    m1, m2 = run["m1"]["counters"], run["m2"]["counters"]
    assert m2["next"] == N_MSGS and m1["next"] == N_MSGS
    assert (m2["rx_down"], m2["rx_up"], m2["rx_bad"], m1["tx_requests"]) == (1, 1, 0, 2)
    assert m2["downs"] >= N_MSGS  # every message found it powered down
    # the simulator saw the CPU in power-down that often, each time woken
    assert run["m2"]["wakes_by_mode"][POWER_DOWN] == m2["down_periods"] == m2["downs"]
    assert run["m2"]["sleep_by_mode"][POWER_DOWN] > 0.5 * sum(run["m2"]["sleep_by_mode"])
    # 20 messages and the bye, nothing else (the power frames are claimed by the driver)
    assert m2["rx_frames"] == N_MSGS + 1 and m1["rx_frames"] == N_MSGS


def test_the_policy_goes_deep_only_for_gaps_longer_than_t_be(run: dict[str, dict]) -> None:
    """The same load on three modules: gaps of T_be/4, T_be/2, 2 T_be, 3 T_be.
    Break-even: power-save exactly for the long half; idle only; deepest always."""
    be, idle, deep = (run[n]["counters"] for n in ("be", "idle", "deep"))
    assert be["t_be"] == T_BE
    assert (be["save_periods"], be["idle_periods"]) == (2 * ROUNDS, 2 * ROUNDS)
    assert (idle["save_periods"], idle["idle_periods"]) == (0, 4 * ROUNDS)
    assert (deep["save_periods"], deep["idle_periods"]) == (4 * ROUNDS, 0)
    assert run["be"]["wakes_by_mode"][POWER_SAVE] == 2 * ROUNDS
    assert run["idle"]["sleep_by_mode"][POWER_SAVE] == 0


def test_the_break_even_policy_spends_the_least_energy(run: dict[str, dict]) -> None:
    """tern-sim's CPU energy (ATmega1284P currents, the oscillator's start-up
    charged per wake) over the same load: mean power, break-even lowest."""
    mw = {n: run[n]["energy_mj"]["cpu"] / (run[n]["end_ps"] / 1e12) for n in ("be", "idle", "deep")}
    assert mw["be"] < mw["deep"] and mw["be"] < mw["idle"], mw


def test_the_clock_keeps_time_through_power_save_and_stands_in_power_down(run: dict[str, dict]) -> None:
    """tern-sim stops Timer1 in power-save and power-down, as the part does
    (tools/simavr/node.c). Power-save: the port keeps time with the
    asynchronous timer (arch/avr/avr_board.c), so after the deep sleeps the
    clock lags the simulator's cycle count by what the module that never went
    deep lags it (start-up and the last print): within a thousandth of the
    time slept in power-save where the asynchronous timer's match ended the
    sleeps (without the port's accounting: all of it), and where bus frames
    woke it too (module 1), late by less than one tick of the 32 kHz crystal
    per sleep, its resolution then. Power-down: the clock
    stands still, and lags by the cycles tern-sim saw it powered down
    (kernel/power.c tells time sync), within a hundredth."""
    base = run["idle"]["lag"]
    for name in ("be", "deep", "m1"):
        saved = run[name]["sleep_by_mode"][POWER_SAVE]
        assert saved > 0.4 * run[name]["cycles"], name  # power-save did happen, a lot
        bound = saved / 1000 if name != "m1" else ASYNC_TICK * run[name]["wakes_by_mode"][POWER_SAVE]
        assert -saved / 1000 <= run[name]["lag"] - base <= bound, (name, run[name]["lag"] - base, saved)
    down = run["m2"]["sleep_by_mode"][POWER_DOWN]
    assert down > 0 and abs(run["m2"]["lag"] - base - down) <= down / 100, (run["m2"]["lag"] - base, down)
