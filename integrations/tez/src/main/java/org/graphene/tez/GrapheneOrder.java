package org.graphene.tez;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The precedence order of one DAG as {@code graphene export --format tez} writes it: a Tez
 * priority range per vertex and per task (vertex name, task index). Version 2 files carry the
 * ranges ({@code low}, {@code high}); version 1 files carry one priority {@code p} per entry,
 * read as graphene's range {@code [3p - 2, 3p]} (the same rule graphene-tez/2 is written with).
 * Lower numbers are served first; {@code high} is the more urgent end. An optional top-level
 * {@code "signature"} is the {@link GrapheneSignature} of the DAG the order was written for.
 */
public final class GrapheneOrder {
  /** A priority range: first attempts at (low + high) / 2, re-executions at high (Tez's rule). */
  public static final class Range {
    public final int low;
    public final int high;

    Range(int low, int high) {
      this.low = low;
      this.high = high;
    }

    @Override
    public String toString() {
      return "[" + high + ", " + low + "]";
    }
  }

  /**
   * The largest export read by default: 16 MiB, about 140,000 tasks as graphene writes them,
   * whose parsed tree takes some 100 MB of the AM's heap.
   */
  public static final long DEFAULT_MAX_BYTES = 16L << 20;

  /** An export nests 3 deep; deeper input is refused before parsing (Jackson recurses). */
  static final int MAX_DEPTH = 32;

  private final String dag;
  private String signature;
  private final Set<String> names = new TreeSet<>();
  private final Map<String, Range> vertices = new HashMap<>();
  private final Map<String, Range> tasks = new HashMap<>();
  private int maxLow;

  private GrapheneOrder(String dag) {
    this.dag = dag;
  }

  public String dagName() {
    return dag;
  }

  /** The export's "signature" field, or null when it has none. */
  public String signature() {
    return signature;
  }

  /** Every vertex the export names (in "vertices" or in "tasks"), sorted. */
  public Set<String> vertexNames() {
    return Collections.unmodifiableSet(names);
  }

  /** The largest low end in the file: ranges of vertices the file lacks go after it. */
  public int maxLow() {
    return maxLow;
  }

  /** The task's range, or its vertex's, or null when the file has neither. */
  public Range rangeOf(String vertex, int taskIndex) {
    Range r = tasks.get(vertex + "[" + taskIndex + "]");
    return r != null ? r : vertices.get(vertex);
  }

  public Range vertexRange(String vertex) {
    return vertices.get(vertex);
  }

  /** Reads an export of at most {@link #DEFAULT_MAX_BYTES}. */
  public static GrapheneOrder read(File file) throws IOException {
    return read(file, DEFAULT_MAX_BYTES);
  }

  /**
   * Reads an export; every problem is an IOException naming the file and the field. A file
   * larger than maxBytes is refused before it is read (and a file growing past it while read).
   */
  public static GrapheneOrder read(File file, long maxBytes) throws IOException {
    String where = file.toString();
    byte[] bytes = readBounded(file, maxBytes);
    checkDepth(bytes, where);
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(bytes);
    } catch (IOException e) {
      throw new IOException(where + ": not JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IOException(where + ": expected a JSON object");
    }
    String format = text(root, "format", where);
    boolean v1 = "graphene-tez/1".equals(format);
    if (!v1 && !"graphene-tez/2".equals(format)) {
      throw new IOException(where + ": format '" + format + "' is not graphene-tez/2 (or /1)");
    }
    GrapheneOrder o = new GrapheneOrder(text(root, "dag", where));
    if (root.has("signature") && !root.get("signature").isNull()) {
      o.signature = text(root, "signature", where);
    }
    JsonNode vs = array(root, "vertices", where);
    for (int i = 0; i < vs.size(); i++) {
      JsonNode v = vs.get(i);
      String at = where + ": vertices[" + i + "]";
      String name = text(v, "name", at);
      o.names.add(name);
      o.vertices.put(name, o.range(v, v1, at));
    }
    JsonNode ts = array(root, "tasks", where);
    for (int i = 0; i < ts.size(); i++) {
      JsonNode t = ts.get(i);
      String at = where + ": tasks[" + i + "]";
      String vertex = text(t, "vertex", at);
      o.names.add(vertex);
      JsonNode index = t.get("index");
      if (index == null || !index.canConvertToInt() || index.asInt() < 0) {
        throw new IOException(at + ".index: missing or not a task index");
      }
      o.tasks.put(vertex + "[" + index.asInt() + "]", o.range(t, v1, at));
    }
    return o;
  }

  /**
   * Refuses JSON nested deeper than {@link #MAX_DEPTH}, in one pass over the bytes: the Jackson
   * on a Hadoop 3.4 class path parses a tree recursively, and a file of a million '[' would
   * overflow the AM's stack.
   */
  private static void checkDepth(byte[] bytes, String where) throws IOException {
    int depth = 0;
    boolean inString = false;
    for (int i = 0; i < bytes.length; i++) {
      byte b = bytes[i];
      if (inString) {
        if (b == '\\') {
          i++;
        } else if (b == '"') {
          inString = false;
        }
      } else if (b == '"') {
        inString = true;
      } else if (b == '[' || b == '{') {
        if (++depth > MAX_DEPTH) {
          throw new IOException(where + ": not JSON: nested more than " + MAX_DEPTH + " deep at byte " + i);
        }
      } else if (b == ']' || b == '}') {
        depth--;
      }
    }
  }

  private static byte[] readBounded(File file, long maxBytes) throws IOException {
    if (!file.exists()) {
      throw new IOException(file + ": no such file");
    }
    if (!file.isFile()) {
      throw new IOException(file + ": not a regular file");
    }
    long size = file.length();
    if (size > maxBytes) {
      throw new IOException(file + ": " + size + " bytes, more than the limit of " + maxBytes);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(Math.max(size, 16), 1 << 30));
    byte[] buf = new byte[65536];
    try (InputStream in = Files.newInputStream(file.toPath())) {
      long total = 0;
      int n;
      while ((n = in.read(buf)) > 0) {
        total += n;
        if (total > maxBytes) {
          throw new IOException(file + ": more than the limit of " + maxBytes + " bytes");
        }
        out.write(buf, 0, n);
      }
    } catch (NoSuchFileException e) {
      throw new IOException(file + ": no such file", e);
    }
    return out.toByteArray();
  }

  private Range range(JsonNode n, boolean v1, String at) throws IOException {
    int low;
    int high;
    if (v1) {
      int p = number(n, "priority", at);
      low = 3 * p;
      high = 3 * p - 2;
    } else {
      low = number(n, "low", at);
      high = number(n, "high", at);
    }
    if (high < 1 || high > low) {
      throw new IOException(at + ": range high " + high + ", low " + low + " is not 1 <= high <= low");
    }
    maxLow = Math.max(maxLow, low);
    return new Range(low, high);
  }

  private static String text(JsonNode n, String field, String at) throws IOException {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual()) {
      throw new IOException(at + "." + field + ": missing or not a string");
    }
    return v.asText();
  }

  private static int number(JsonNode n, String field, String at) throws IOException {
    JsonNode v = n.get(field);
    if (v == null || !v.canConvertToInt()) {
      throw new IOException(at + "." + field + ": missing or not an integer");
    }
    return v.asInt();
  }

  private static JsonNode array(JsonNode n, String field, String at) throws IOException {
    JsonNode v = n.get(field);
    if (v == null || !v.isArray()) {
      throw new IOException(at + "." + field + ": missing or not an array");
    }
    return v;
  }

  /** For messages. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("GrapheneOrder(" + dag + ": ");
    Iterator<String> it = vertices.keySet().iterator();
    while (it.hasNext()) {
      String v = it.next();
      b.append(v).append(vertices.get(v)).append(it.hasNext() ? ", " : ")");
    }
    return b.toString();
  }
}
