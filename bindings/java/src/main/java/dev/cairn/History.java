package dev.cairn;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link Model#fit} returns (Keras' History): the epochs it ran and, per log name, one value
 * per epoch that had it (validation values only for validated epochs). A Java copy.
 */
public final class History {
  private final long[] epochs;
  private final Map<String, double[]> values;

  private History(long[] epochs, Map<String, double[]> values) {
    this.epochs = epochs;
    this.values = values;
  }

  /** Copies and frees the cairn_history at {@code handle}. */
  static History take(long handle) {
    try {
      int n = (int) CairnNative.historyNumEpochs(handle);
      long[] epochs = new long[n];
      for (int i = 0; i < n; ++i) epochs[i] = CairnNative.historyEpoch(handle, i);
      Map<String, double[]> values = new LinkedHashMap<>();
      long names = CairnNative.historyNumNames(handle);
      for (long i = 0; i < names; ++i) {
        String name = CairnNative.historyName(handle, i);
        double[] v = ModelNative.historyValues(handle, name.getBytes(StandardCharsets.UTF_8));
        values.put(name, v == null ? new double[0] : v);
      }
      return new History(epochs, values);
    } finally {
      CairnNative.historyFree(handle);
    }
  }

  /**
   * The numbers of the epochs that ran, from 0 (initialEpoch + i unless a backup resumed the fit).
   *
   * @return a copy of the epoch numbers
   */
  public long[] epochs() {
    return epochs.clone();
  }

  /**
   * The log names, in order ("loss", the metrics, "val_loss", ...).
   *
   * @return the names
   */
  public List<String> names() {
    return Collections.unmodifiableList(new ArrayList<>(values.keySet()));
  }

  /**
   * The values of {@code name}, one per epoch that had it; throws CairnException NOT_FOUND for a
   * name the history does not have.
   *
   * @param name the log name
   * @return a copy of the values
   */
  public double[] values(String name) {
    double[] v = values.get(name);
    if (v == null) {
      throw new CairnException(Code.NOT_FOUND, "History.values: no values \"" + name + "\" (the history has "
          + String.join(", ", values.keySet()) + ")");
    }
    return v.clone();
  }

  /**
   * The last value of {@code name}.
   *
   * @param name the log name
   * @return its value in the last epoch that had it
   */
  public double last(String name) {
    double[] v = values(name);
    if (v.length == 0) throw new CairnException(Code.NOT_FOUND, "History.last: no values \"" + name + "\"");
    return v[v.length - 1];
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("History(epochs ").append(java.util.Arrays.toString(epochs));
    values.forEach((k, v) -> b.append(", ").append(k).append('=').append(java.util.Arrays.toString(v)));
    return b.append(')').toString();
  }
}
