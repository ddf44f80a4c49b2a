"""The running process: clock, scheduler, ticker, file watch, hot reload and liveness."""
