// SPDX-License-Identifier: MIT
// SIGTERM and SIGINT (how Slurm preempts a job, and Ctrl-C) ask commprof to stop at the next
// step boundary instead of dying mid-step: results measured so far are still written.
#pragma once

namespace commprof {

/// Installs handlers for SIGTERM and SIGINT that only record the signal (async-signal-safe).
void install_stop_signals();
/// The signal received since install_stop_signals(), or 0.
int stop_signal();
/// Forgets a recorded signal, so that one process can run several stoppable loops (tests).
void clear_stop_signal();
/// Waits `seconds`, or less once a signal is recorded (the refresh loops of watch and
/// diagnose --watch: Ctrl-C ends them at once, not after the interval).
void pause_unless_stopped(double seconds);

}  // namespace commprof
