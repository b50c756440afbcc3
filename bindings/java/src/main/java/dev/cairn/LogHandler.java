package dev.cairn;

/**
 * Receives a context's log messages (cairn_context_options.log_fn). Called from whichever thread
 * logs, possibly a runtime thread. An exception it throws is caught and ignored (noted on stderr):
 * it never reaches the C library or the code that triggered the message.
 */
@FunctionalInterface
public interface LogHandler {
  /**
   * @param level the level, or null for a level newer than this binding
   *
   * @param message the message
   */
  void log(LogLevel level, String message);
}
