package org.graphene.tez;

import java.io.File;
import java.io.IOException;

import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.tez.dag.app.dag.DAG;
import org.apache.tez.dag.app.dag.DAGScheduler;
import org.apache.tez.dag.app.dag.Vertex;
import org.apache.tez.dag.app.dag.event.DAGEventSchedulerUpdate;
import org.apache.tez.dag.app.dag.event.TaskAttemptEventSchedule;
import org.apache.tez.dag.records.TezTaskAttemptID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Tez {@link DAGScheduler} that requests every task attempt's container at the priority range
 * graphene's offline order gives its task ({@code tez.am.dag.scheduler.class =
 * org.graphene.tez.GrapheneDAGScheduler}).
 *
 * <p>Where the order comes from: the system property {@value #PROPERTY} or the environment
 * variable {@value #ENV} of the AM (set through {@code tez.am.launch.cmd-opts} or
 * {@code tez.am.launch.env}) names the export file, or a directory holding
 * {@code <dag name>.json}. The DAG scheduler is built by Tez with the DAG and the event handler
 * only (no configuration), hence a property of the AM process.
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
 * <p>A missing or malformed export, or one written for another DAG, does not fail the DAG: the
 * scheduler logs why at ERROR and falls back to Tez's natural order for the whole DAG
 * ({@link #loadError()} says why), because a scheduling hint must never stop a job from running.
 */
public class GrapheneDAGScheduler extends DAGScheduler {
  public static final String PROPERTY = "graphene.tez.export";
  public static final String ENV = "GRAPHENE_TEZ_EXPORT";
  private static final Logger LOG = LoggerFactory.getLogger(GrapheneDAGScheduler.class);

  private final DAG dag;
  private final EventHandler handler;
  private GrapheneOrder order;
  private String loadError;
  private boolean loaded;

  public GrapheneDAGScheduler(DAG dag, EventHandler dispatcher) {
    this.dag = dag;
    this.handler = dispatcher;
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

  private void load() {
    if (loaded) {
      return;
    }
    loaded = true;
    String where = System.getProperty(PROPERTY);
    if (where == null || where.isEmpty()) {
      where = System.getenv(ENV);
    }
    if (where == null || where.isEmpty()) {
      fail("neither -D" + PROPERTY + " nor $" + ENV + " names a graphene export");
      return;
    }
    File file = new File(where);
    if (file.isDirectory()) {
      file = new File(file, dag.getName() + ".json");
    }
    try {
      GrapheneOrder o = GrapheneOrder.read(file);
      if (!o.dagName().equals(dag.getName())) {
        fail(file + " is the order of DAG '" + o.dagName() + "', not of '" + dag.getName() + "'");
        return;
      }
      order = o;
      LOG.info("graphene order for DAG " + dag.getName() + " from " + file);
    } catch (IOException e) {
      fail(e.getMessage());
    }
  }

  private void fail(String why) {
    loadError = why;
    LOG.error("graphene: DAG " + dag.getName() + " runs in Tez's natural order: " + why);
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
