package dev.cairn;

/**
 * An error reported by the Cairn C library: the status code and the library's message, e.g.
 * {@code INVALID_ARGUMENT} and "Add: incompatible shapes [2,3] and [4]". Unchecked, like the
 * other failures of a tensor computation.
 */
public class CairnException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int rawCode;

  public CairnException(Code code, String message) {
    super(message);
    this.rawCode = code.value();
  }

  // Called from the JNI glue (cairn_jni_check_status).
  CairnException(int rawCode, String message) {
    super(message);
    this.rawCode = rawCode;
  }

  /** The status code; {@link Code#UNKNOWN} for a code newer than this binding. */
  public Code code() {
    Code code = Code.fromValue(rawCode);
    return code != null ? code : Code.UNKNOWN;
  }

  /** The numeric cairn_code, also for codes this binding does not know. */
  public int rawCode() {
    return rawCode;
  }

  @Override
  public String toString() {
    Code code = Code.fromValue(rawCode);
    return getClass().getName() + " [" + (code != null ? code : "code " + rawCode) + "]: " + getMessage();
  }
}
