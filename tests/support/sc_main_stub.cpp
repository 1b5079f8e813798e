// libsystemc references sc_main; our test executables start from GoogleTest's main and call
// sc_start themselves, so this entry point is never run. Weak, so a suite may define its own.
extern "C" __attribute__((weak)) int sc_main(int, char*[]) {
  return 0;
}
