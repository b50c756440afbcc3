package dev.cairn;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Library-wide facts: versions and the op registry. */
public final class Cairn {
  /** The ABI version this binding was generated for; the loaded library must report the same. */
  public static final int ABI_VERSION = CairnNative.ABI_VERSION;

  private Cairn() {}

  /**
   * The loaded library's ABI version (checked against {@link #ABI_VERSION} at load).
   *
   * @return the loaded library's ABI version (checked against {@link #ABI_VERSION} at load)
   */
  public static int abiVersion() {
    NativeLibrary.check();
    return CairnNative.abiVersion();
  }

  /**
   * The library's semantic version, e.g. "0.1.0".
   *
   * @return the library's semantic version
   */
  public static String version() {
    NativeLibrary.check();
    return CairnNative.version();
  }

  /**
   * The names of all registered ops, sorted.
   *
   * @return the names of all registered ops, sorted
   */
  public static List<String> opNames() {
    NativeLibrary.check();
    long n = CairnNative.opCount();
    List<String> names = new ArrayList<>((int) n);
    for (long i = 0; i < n; ++i) names.add(CairnNative.opName(i));
    return Collections.unmodifiableList(names);
  }

  /**
   * How many outputs op {@code op} gives with these attributes (null for none): fixed for most
   * ops, from the count attribute for Split and Unpack (cairn_op_num_outputs). Throws NOT_FOUND
   * for an unknown op, INVALID_ARGUMENT for a missing or mistyped count.
   *
   * @param op the op's registered name, e.g. "MatMul"
   * @param attrs the attributes (null: none)
   * @return the number of outputs
   */
  public static int numOutputs(String op, OpAttrs attrs) {
    if (op == null) throw new NullPointerException("op");
    NativeLibrary.check();
    return OpAttrs.numOutputs(NativeResources.cstr(op), attrs);
  }

  /**
   * The whole op registry as JSON (cairn_op_registry_json).
   *
   * @return the whole op registry as JSON (cairn_op_registry_json)
   */
  public static String opRegistryJson() {
    NativeLibrary.check();
    return CairnNative.opRegistryJson();
  }
}
