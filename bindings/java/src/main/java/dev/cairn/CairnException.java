package dev.cairn;

/**
 * An error reported by Cairn: a status code and a message. {@link #getMessage()} reads
 * {@code <CODE>: <message>}, e.g. {@code INVALID_ARGUMENT: Add: incompatible shapes [2,3] and [4]},
 * worded the same in the Go and Rust bindings; {@link #code()} and {@link #detail()} give the two
 * parts. Errors the binding finds itself (a closed handle, a data array that does not fit a shape)
 * name the Java method, e.g. {@code FAILED_PRECONDITION: Tensor.read: tensor is closed}. Unchecked,
 * like the other failures of a tensor computation.
 */
public class CairnException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The numeric cairn_code. */
  private final int rawCode;
  /** The message without the code. */
  private final String detail;

  /**
   * An exception with {@code code} and {@code message} (without the code).
   *
   * @param code the status code
   * @param message what went wrong, naming the function or method
   */
  public CairnException(Code code, String message) {
    this(code.value(), message);
  }

  CairnException(Code code, String message, Throwable cause) {
    this(code.value(), message);
    if (cause != null) initCause(cause);
  }

  // Called from the JNI glue (cairn_jni_check_status).
  CairnException(int rawCode, String message) {
    super(codeName(rawCode) + ": " + message);
    this.rawCode = rawCode;
    this.detail = message;
  }

  private static String codeName(int rawCode) {
    Code code = Code.fromValue(rawCode);
    return code != null ? code.name() : Code.UNKNOWN.name();
  }

  /**
   * The status code.
   *
   * @return the code; {@link Code#UNKNOWN} for a code newer than this binding
   */
  public Code code() {
    Code code = Code.fromValue(rawCode);
    return code != null ? code : Code.UNKNOWN;
  }

  /**
   * The numeric cairn_code, also for codes this binding does not know.
   *
   * @return the C value of the code
   */
  public int rawCode() {
    return rawCode;
  }

  /**
   * The message without the code in front, e.g. {@code Add: incompatible shapes [2,3] and [4]}.
   *
   * @return the message as the library or the binding worded it
   */
  public String detail() {
    return detail;
  }
}
