package org.graphene.tez;

import java.io.File;
import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.tez.dag.api.records.DAGProtos.DAGPlan;
import org.apache.tez.dag.api.records.DAGProtos.PlanKeyValuePair;
import org.apache.tez.dag.app.dag.DAG;
import org.apache.tez.dag.app.dag.DAGScheduler;
import org.apache.tez.dag.app.dag.Vertex;
import org.apache.tez.dag.app.dag.event.DAGEventSchedulerUpdate;
import org.apache.tez.dag.app.dag.event.TaskAttemptEventSchedule;
import org.apache.tez.dag.app.dag.impl.DAGImpl;
import org.apache.tez.dag.records.TezTaskAttemptID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Tez {@link DAGScheduler} that requests every task attempt's container at the priority range
 * graphene's offline order gives its task ({@code tez.am.dag.scheduler.class =
 * org.graphene.tez.GrapheneDAGScheduler}).
 *
 * <p>Where the order comes from, looked up once when Tez builds the scheduler at DAG start: the
 * key {@value #PROPERTY} of the DAG's configuration (the AM's configuration with the DAG's own
 * {@code dag.setConf} keys on top), else the AM's system property {@value #PROPERTY}
 * ({@code tez.am.launch.cmd-opts}), else its environment variable {@value #ENV}
 * ({@code tez.am.launch.env}). It names an export file, or a directory of exports: there the
 * scheduler reads {@code <signature>.json}, where the signature is the DAG's
 * {@link GrapheneSignature} (vertex names and edges, so a renamed recurring DAG finds its order),
 * else {@code <dag name>.json}. An export with a {@code "signature"} field must carry the DAG's;
 * one without must be found by the signature or name the DAG; every vertex it names must be one of
 * the DAG's. Reading is bounded by {@value #MAX_BYTES_KEY} (default
 * {@link GrapheneOrder#DEFAULT_MAX_BYTES}), checked before the file is read; local files need no
 * timeout.
 *
 * <p>Per attempt: the task's range from the file; else its vertex's (a task Tez added at run
 * time, e.g. after auto-reduce parallelism changed the count); else, for a vertex the file lacks,
 * Tez's natural-order range shifted past every range in the file, so it never jumps ahead of
 * graphene's tasks. Tez itself then asks for a first attempt at the middle of the range and a
 * re-executed attempt at its high end (TaskAttemptImpl), so retries keep Tez's behaviour.
 *
 * <p>What Tez still decides: when a task is runnable (vertex managers, slow start, the DAG's
 * edges); the priority only orders the container requests that are pending at once.
 *
 * <p>The outcome is logged in exactly one line per DAG: at INFO {@value #IN_USE} followed by the
 * DAG's name, the export file and the signature; or, when no order can be used (none configured,
 * none found, malformed, another DAG's), at WARN (nothing configured or found) or ERROR (a bad
 * export) {@value #FALLBACK} followed by the DAG's name, the signature and the reason. The DAG
 * then runs in Tez's natural order ({@link #loadError()} says why): a scheduling hint never
 * stops a job from running.
 */
public class GrapheneDAGScheduler extends DAGScheduler {
  /** The configuration key and system property naming the export file or directory. */
  public static final String PROPERTY = "graphene.tez.export";
  /** The environment variable naming the export file or directory. */
  public static final String ENV = "GRAPHENE_TEZ_EXPORT";
  /** The configuration key bounding the size of an export read (bytes). */
  public static final String MAX_BYTES_KEY = "graphene.tez.export.max-bytes";
  /** The start of the one INFO line logged when graphene's order is in use. */
  public static final String IN_USE = "graphene-tez: order in use";
  /** The start of the one WARN or ERROR line logged when the DAG runs in Tez's natural order. */
  public static final String FALLBACK = "graphene-tez: natural order in use";

  private static final Logger LOG = LoggerFactory.getLogger(GrapheneDAGScheduler.class);

  private final DAG dag;
  private final EventHandler handler;
  private GrapheneOrder order;
  private String loadError;
  private String signature;
  private File exportFile;
  private boolean loaded;

  public GrapheneDAGScheduler(DAG dag, EventHandler dispatcher) {
    this.dag = dag;
    this.handler = dispatcher;
    load();
  }

  /** The order in use, or null when the DAG runs in Tez's natural order. */
  public synchronized GrapheneOrder order() {
    load();
    return order;
  }

  /** Why no order is in use, or null. */
  public synchronized String loadError() {
    load();
    return loadError;
  }

  /** The DAG's graphene-tez-signature/1, or null when its vertex names have none. */
  public synchronized String signature() {
    load();
    return signature;
  }

  /** The export file in use, or null. */
  public synchronized File exportFile() {
    load();
    return exportFile;
  }

  private synchronized void load() {
    if (loaded) {
      return;
    }
    loaded = true;
    try {
      tryLoad();
    } catch (RuntimeException | StackOverflowError e) {
      // A scheduling hint never fails the DAG, whatever went wrong.
      fail(true, "unexpected " + e);
    }
  }

  private void tryLoad() {
    String noSignature = null;
    try {
      signature = GrapheneSignature.of(dag);
    } catch (GrapheneSignature.NoSignatureException e) {
      noSignature = e.getMessage();
    }
    String where = confValue(PROPERTY);
    String from = "the DAG's configuration key " + PROPERTY;
    if (where == null || where.isEmpty()) {
      where = System.getProperty(PROPERTY);
      from = "-D" + PROPERTY;
    }
    if (where == null || where.isEmpty()) {
      where = System.getenv(ENV);
      from = "$" + ENV;
    }
    if (where == null || where.isEmpty()) {
      fail(false, "no graphene export configured: neither the configuration key " + PROPERTY
          + " (DAG or AM), nor -D" + PROPERTY + ", nor $" + ENV + " is set");
      return;
    }
    long maxBytes = GrapheneOrder.DEFAULT_MAX_BYTES;
    String max = confValue(MAX_BYTES_KEY);
    if (max != null && !max.trim().isEmpty()) {
      try {
        maxBytes = Long.parseLong(max.trim());
      } catch (NumberFormatException e) {
        fail(true, MAX_BYTES_KEY + " '" + max + "' is not a number of bytes");
        return;
      }
    }
    File file = new File(where);
    boolean bySignature = false;
    if (file.isDirectory()) {
      File bySig = signature == null ? null : new File(file, signature + ".json");
      File byName = new File(file, dag.getName() + ".json");
      if (!file.equals(byName.getParentFile())) {
        byName = null; // a DAG name with a path separator never leaves the directory
      }
      if (bySig != null && bySig.isFile()) {
        file = bySig;
        bySignature = true;
      } else if (byName != null && byName.isFile()) {
        file = byName;
      } else {
        fail(false, "the export directory " + where + " (from " + from + ") holds neither "
            + (bySig != null ? bySig.getName() : "a signature-keyed export (" + noSignature + ")")
            + " nor " + (byName != null ? byName.getName() : "a file named after the DAG"));
        return;
      }
    }
    GrapheneOrder o;
    try {
      o = GrapheneOrder.read(file, maxBytes);
    } catch (IOException e) {
      fail(true, e.getMessage() + " (from " + from + ")");
      return;
    }
    if (o.signature() != null) {
      if (signature == null) {
        fail(true, file + " is the order of the DAG with signature " + o.signature() + ", and "
            + noSignature);
        return;
      }
      if (!o.signature().equals(signature)) {
        fail(true, file + " is the order of the DAG with signature " + o.signature()
            + " (DAG '" + o.dagName() + "'), not of this DAG's shape");
        return;
      }
    } else if (!bySignature && !o.dagName().equals(dag.getName())) {
      fail(true, file + " is the order of DAG '" + o.dagName() + "', not of '" + dag.getName() + "'");
      return;
    }
    Set<String> names = new TreeSet<>();
    Map<?, Vertex> vertices = dag.getVertices();
    if (vertices != null) {
      for (Vertex v : vertices.values()) {
        names.add(v.getName());
      }
    }
    for (String v : o.vertexNames()) {
      if (!names.contains(v)) {
        fail(true, file + " names vertex '" + v + "', which the DAG lacks (its vertices: "
            + String.join(", ", names) + ")");
        return;
      }
    }
    order = o;
    exportFile = file;
    LOG.info(IN_USE + " for DAG '" + dag.getName() + "': export " + file + ", signature "
        + (signature != null ? signature : "none (" + noSignature + ")"));
  }

  /** The key from the DAG's configuration: the AM's with the DAG's own keys on top. */
  private String confValue(String key) {
    if (dag instanceof DAGImpl) {
      Configuration conf = ((DAGImpl) dag).getConf();
      if (conf != null) {
        return conf.get(key);
      }
    }
    // Another DAG implementation (tests): the DAG's own keys from its plan.
    DAGPlan plan = dag.getJobPlan();
    if (plan != null && plan.hasDagConf()) {
      for (PlanKeyValuePair kv : plan.getDagConf().getConfKeyValuesList()) {
        if (key.equals(kv.getKey())) {
          return kv.getValue();
        }
      }
    }
    return null;
  }

  private void fail(boolean error, String why) {
    loadError = why;
    order = null;
    String line = FALLBACK + " for DAG '" + dag.getName() + "' (signature "
        + (signature != null ? signature : "none") + "): " + why;
    if (error) {
      LOG.error(line);
    } else {
      LOG.warn(line);
    }
  }

  @Override
  public void scheduleTaskEx(DAGEventSchedulerUpdate event) {
    TezTaskAttemptID id = event.getAttempt().getTaskAttemptID();
    Vertex vertex = dag.getVertex(event.getAttempt().getVertexID());
    int low;
    int high;
    GrapheneOrder o = order();
    GrapheneOrder.Range r = o == null ? null : o.rangeOf(vertex.getName(), id.getTaskID().getId());
    if (r != null) {
      low = r.low;
      high = r.high;
    } else {
      int shift = o == null ? 0 : o.maxLow();
      low = shift + getPriorityLowLimit(dag, vertex);
      high = shift + getPriorityHighLimit(dag, vertex);
    }
    handler.handle(new TaskAttemptEventSchedule(id, low, high));
  }

  @Override
  public void taskCompletedEx(DAGEventSchedulerUpdate event) {}
}
