/* Included after SimGrid's smpi_helpers.h in the simulated build (SCALEPROBE_SIMULATED; smpicxx
 * force-includes that header into every file). Its function-like `exit` macro rewrites member
 * functions named exit (CLI11's App::exit) into calls that do not exist; this project ends its
 * programs by returning from main, and an error aborts the whole simulation either way. Its clock
 * macros stay: clock_gettime then reads the simulated clock. */
#ifdef exit
#undef exit
#endif
