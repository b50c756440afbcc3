package dev.cairn;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One element of a {@link Dataset}: its components' tensors in order, each with its name (the
 * dataset's element spec, {@link Dataset#components()}). The caller owns the tensors: {@link
 * #close()} closes them all (and is idempotent); a tensor taken out with {@link #take} is the
 * caller's to close on its own. Not thread-safe.
 */
public final class Element implements AutoCloseable {
  private final List<String> names;
  private final Tensor[] tensors;

  Element(List<String> names, Tensor[] tensors) {
    if (names.size() != tensors.length) {
      throw new IllegalStateException(tensors.length + " tensors for " + names.size() + " components " + names);
    }
    this.names = names;
    this.tensors = tensors;
  }

  // Wraps new handles (taking them) under `names`.
  static Element wrap(List<String> names, long[] handles) {
    Tensor[] t = new Tensor[handles.length];
    for (int i = 0; i < handles.length; ++i) t[i] = new Tensor(handles[i]);
    return new Element(names, t);
  }

  // Wraps new references to borrowed handles (a callback's inputs).
  static Element share(List<String> names, long[] borrowed) {
    Tensor[] t = new Tensor[borrowed.length];
    try {
      for (int i = 0; i < borrowed.length; ++i) t[i] = new Tensor(CairnNative.tensorShare(borrowed[i]));
    } catch (RuntimeException | Error e) {
      for (Tensor x : t) if (x != null) x.close();
      throw e;
    }
    return new Element(names, t);
  }

  /**
   * The number of components.
   *
   * @return the number of components
   */
  public int size() {
    return tensors.length;
  }

  /**
   * The component names, in order.
   *
   * @return the names (unmodifiable)
   */
  public List<String> names() {
    return names;
  }

  /**
   * Component {@code index}'s tensor (owned by this element: closed with it).
   *
   * @param index the component's position
   * @return the tensor
   */
  public Tensor get(int index) {
    Objects.checkIndex(index, tensors.length);
    Tensor t = tensors[index];
    if (t == null) throw new IllegalStateException("component " + names.get(index) + " was taken");
    return t;
  }

  /**
   * The tensor of the component named {@code name} (owned by this element: closed with it).
   *
   * @param name the component's name
   * @return the tensor
   * @throws IllegalArgumentException when no component has that name
   */
  public Tensor get(String name) {
    return get(indexOf(name));
  }

  /**
   * Takes component {@code index}'s tensor out: the caller closes it, this element no longer does.
   *
   * @param index the component's position
   * @return the tensor
   */
  public Tensor take(int index) {
    Tensor t = get(index);
    tensors[index] = null;
    return t;
  }

  /**
   * Takes the tensor of the component named {@code name} out (see {@link #take(int)}).
   *
   * @param name the component's name
   * @return the tensor
   */
  public Tensor take(String name) {
    return take(indexOf(name));
  }

  /**
   * The tensors in component order (owned by this element).
   *
   * @return the tensors (unmodifiable)
   */
  public List<Tensor> tensors() {
    List<Tensor> out = new ArrayList<>(tensors.length);
    for (int i = 0; i < tensors.length; ++i) out.add(get(i));
    return Collections.unmodifiableList(out);
  }

  private int indexOf(String name) {
    int i = names.indexOf(Objects.requireNonNull(name, "name"));
    if (i < 0) throw new IllegalArgumentException("no component '" + name + "' in " + names);
    return i;
  }

  /** Closes the tensors still in the element. */
  @Override
  public void close() {
    for (int i = 0; i < tensors.length; ++i) {
      if (tensors[i] != null) tensors[i].close();
      tensors[i] = null;
    }
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("Element{");
    for (int i = 0; i < tensors.length; ++i) {
      if (i > 0) b.append(", ");
      b.append(names.get(i)).append(": ").append(tensors[i] == null ? "(taken)" : tensors[i].toString());
    }
    return b.append('}').toString();
  }
}
