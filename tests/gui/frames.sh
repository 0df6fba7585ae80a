# Sourced by the scripts that drive the visible window with real X events (xdotool): they start
# the app with --frame-file "$frames" and wait on it instead of sleeping a fixed time, which a
# machine busy with other work overruns (a frame under llvmpipe can take a second there).
#   wait_settled: until the app settled (model loaded, traces shown), at most 180 s
#   wait_frames N: until N more frames were drawn, so the events sent before were read (ImGui
#                  takes one key or button event per frame)
# Both call the script's fail() when the app stops drawing.
frame_count() {
  local n
  n=$(cat "$frames" 2>/dev/null)
  echo "${n:-0}"
}
wait_settled() {
  for _ in $(seq 1800); do
    [ -f "$frames" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "the app exited before it settled"
    sleep 0.1
  done
  fail "the app never settled"
}
wait_frames() {
  local until=$(($(frame_count) + $1))
  for _ in $(seq 1200); do
    [ "$(frame_count)" -ge "$until" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "the app exited"
    sleep 0.05
  done
  fail "the app stopped drawing"
}
# Ctrl+Q, then wait for the exit (the app writes its layout file as it quits).
quit_app() {
  xdotool key ctrl+q
  for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "Ctrl+Q did not quit"
  wait "$pid" || fail "exit code $?"
}
