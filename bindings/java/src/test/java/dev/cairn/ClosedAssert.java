package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.function.Executable;

/** Use after close: a CairnException FAILED_PRECONDITION worded in Java terms. */
final class ClosedAssert {
  private ClosedAssert() {}

  /** Asserts that {@code use} throws FAILED_PRECONDITION with the message {@code expected}. */
  static void assertClosed(String expected, Executable use) {
    CairnException e = assertThrows(CairnException.class, use);
    assertEquals(Code.FAILED_PRECONDITION, e.code());
    assertEquals(expected, e.getMessage());
  }
}
