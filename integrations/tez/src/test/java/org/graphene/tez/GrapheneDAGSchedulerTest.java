package org.graphene.tez;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.net.URISyntaxException;
import java.util.List;

import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.event.Event;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.tez.dag.app.dag.DAG;
import org.apache.tez.dag.app.dag.TaskAttempt;
import org.apache.tez.dag.app.dag.Vertex;
import org.apache.tez.dag.app.dag.event.DAGEventSchedulerUpdate;
import org.apache.tez.dag.app.dag.event.TaskAttemptEventSchedule;
import org.apache.tez.dag.records.TezDAGID;
import org.apache.tez.dag.records.TezTaskAttemptID;
import org.apache.tez.dag.records.TezTaskID;
import org.apache.tez.dag.records.TezVertexID;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.mockito.ArgumentCaptor;

/**
 * The scheduler with Tez's own records and events, as Tez's TestDAGScheduler drives its
 * schedulers: a mocked DAG of the bundled example's four vertices, real attempt ids, and the
 * TaskAttemptEventSchedule events captured from the event handler. The export under
 * src/test/resources/example.json was written by
 * {@code graphene build-schedule traces/example.json --no-timing | graphene export - --format tez}
 * (through a file; see the README).
 */
public class GrapheneDAGSchedulerTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private final String[] names = {"scan", "agg", "fix", "out"};
  private DAG dag;
  private TezDAGID dagId;
  private EventHandler handler;

  @Before
  public void setUp() {
    dagId = TezDAGID.getInstance(ApplicationId.newInstance(1, 1), 1);
    dag = mock(DAG.class);
    when(dag.getName()).thenReturn("example");
    when(dag.getTotalVertices()).thenReturn(names.length);
    java.util.Map<TezVertexID, Vertex> all = new java.util.LinkedHashMap<>();
    Vertex[] vs = new Vertex[names.length];
    for (int i = 0; i < names.length; i++) {
      TezVertexID vid = TezVertexID.getInstance(dagId, i);
      Vertex v = mock(Vertex.class);
      when(v.getName()).thenReturn(names[i]);
      when(v.getVertexId()).thenReturn(vid);
      when(v.getDistanceFromRoot()).thenReturn(i);
      when(dag.getVertex(vid)).thenReturn(v);
      all.put(vid, v);
      vs[i] = v;
    }
    // The example's chain: scan -> agg -> fix -> out.
    for (int i = 0; i < names.length; i++) {
      java.util.Map<Vertex, org.apache.tez.dag.app.dag.impl.Edge> outs = new java.util.HashMap<>();
      if (i + 1 < names.length) {
        outs.put(vs[i + 1], null);
      }
      when(vs[i].getOutputVertices()).thenReturn(outs);
    }
    when(dag.getVertices()).thenReturn(all);
    handler = mock(EventHandler.class);
  }

  @After
  public void tearDown() {
    System.clearProperty(GrapheneDAGScheduler.PROPERTY);
  }

  private static void write(File f, String text) throws IOException {
    try (FileWriter w = new FileWriter(f)) {
      w.write(text);
    }
  }

  private File example() throws URISyntaxException {
    return new File(getClass().getResource("/example.json").toURI());
  }

  /** Schedules attempt `attempt` of task `index` of vertex `v`; returns the event sent. */
  private TaskAttemptEventSchedule schedule(GrapheneDAGScheduler s, int v, int index, int attempt, int n) {
    TezVertexID vid = TezVertexID.getInstance(dagId, v);
    TezTaskAttemptID id = TezTaskAttemptID.getInstance(TezTaskID.getInstance(vid, index), attempt);
    TaskAttempt ta = mock(TaskAttempt.class);
    when(ta.getTaskAttemptID()).thenReturn(id);
    when(ta.getVertexID()).thenReturn(vid);
    s.scheduleTask(new DAGEventSchedulerUpdate(DAGEventSchedulerUpdate.UpdateType.TA_SCHEDULE, ta));
    ArgumentCaptor<Event> sent = ArgumentCaptor.forClass(Event.class);
    verify(handler, times(n)).handle(sent.capture());
    List<Event> all = sent.getAllValues();
    TaskAttemptEventSchedule e = (TaskAttemptEventSchedule) all.get(all.size() - 1);
    assertEquals(id, e.getTaskAttemptID());
    return e;
  }

  /** Tez's TaskAttemptImpl: a first attempt asks at the middle, a re-execution at the high end. */
  private static int requested(TaskAttemptEventSchedule e, boolean rescheduled) {
    return rescheduled ? e.getPriorityHighLimit() : (e.getPriorityHighLimit() + e.getPriorityLowLimit()) / 2;
  }

  @Test
  public void tasksGetTheirRangeFromTheExport() throws Exception {
    System.setProperty(GrapheneDAGScheduler.PROPERTY, example().getPath());
    GrapheneDAGScheduler s = new GrapheneDAGScheduler(dag, handler);
    assertNull(s.loadError());
    // agg[3] is 44th in graphene's order: [130, 132]; first attempt 131, a retry 130.
    TaskAttemptEventSchedule e = schedule(s, 1, 3, 0, 1);
    assertEquals(132, e.getPriorityLowLimit());
    assertEquals(130, e.getPriorityHighLimit());
    assertEquals(131, requested(e, false));
    TaskAttemptEventSchedule retry = schedule(s, 1, 3, 1, 2);
    assertEquals(130, requested(retry, true));
    // Every task of the example (40 + 8 + 2 + 2): the event carries the export's range, 3 wide.
    GrapheneOrder o = s.order();
    int k = 2;
    java.util.Set<Integer> lows = new java.util.HashSet<>();
    for (int v = 0; v < names.length; v++) {
      for (int i = 0; i < (v == 0 ? 40 : v == 1 ? 8 : 2); i++) {
        TaskAttemptEventSchedule t = schedule(s, v, i, 0, ++k);
        GrapheneOrder.Range r = o.rangeOf(names[v], i);
        assertEquals(r.low, t.getPriorityLowLimit());
        assertEquals(r.high, t.getPriorityHighLimit());
        assertEquals(r.low - 2, r.high);
        lows.add(r.low);
      }
    }
    // One range per task without --levels: 52 distinct, the ranks 1..52 times 3.
    assertEquals(52, lows.size());
    for (int p = 1; p <= 52; p++) {
      assertTrue(lows.contains(3 * p));
    }
  }

  @Test
  public void aDirectoryIsSearchedForTheDagsName() throws Exception {
    File dir = tmp.newFolder();
    java.nio.file.Files.copy(example().toPath(), new File(dir, "example.json").toPath());
    System.setProperty(GrapheneDAGScheduler.PROPERTY, dir.getPath());
    GrapheneDAGScheduler s = new GrapheneDAGScheduler(dag, handler);
    assertNull(s.loadError());
    int want = GrapheneOrder.read(example()).rangeOf("scan", 0).low;
    assertEquals(want, schedule(s, 0, 0, 0, 1).getPriorityLowLimit());
  }

  @Test
  public void aVertexTheExportLacksGoesAfterEveryGrapheneRange() throws Exception {
    File f = tmp.newFile("partial.json");
    write(f, "{\"format\": \"graphene-tez/2\", \"dag\": \"example\", \"vertices\": ["
          + "{\"name\": \"scan\", \"priority\": 1, \"low\": 3, \"high\": 1, \"tasks\": 40}], \"tasks\": []}");
    System.setProperty(GrapheneDAGScheduler.PROPERTY, f.getPath());
    GrapheneDAGScheduler s = new GrapheneDAGScheduler(dag, handler);
    // scan[7]: no task entry, the vertex's range.
    TaskAttemptEventSchedule scan = schedule(s, 0, 7, 0, 1);
    assertEquals(3, scan.getPriorityLowLimit());
    // out: not in the file; Tez's natural range for depth 3 of 4 vertices, vertex id 3:
    // (3 + 1) * 4 * 3 + 3 * 3 = 57, shifted past the file's largest low end (3).
    TaskAttemptEventSchedule out = schedule(s, 3, 0, 0, 2);
    assertEquals(60, out.getPriorityLowLimit());
    assertEquals(58, out.getPriorityHighLimit());
  }

  @Test
  public void aVersionOneExportIsReadAsRanges() throws Exception {
    File f = tmp.newFile("v1.json");
    write(f, "{\"format\": \"graphene-tez/1\", \"dag\": \"example\", \"vertices\": [], \"tasks\": ["
          + "{\"id\": \"fix[1]\", \"vertex\": \"fix\", \"index\": 1, \"priority\": 5}]}");
    System.setProperty(GrapheneDAGScheduler.PROPERTY, f.getPath());
    TaskAttemptEventSchedule e = schedule(new GrapheneDAGScheduler(dag, handler), 2, 1, 0, 1);
    assertEquals(15, e.getPriorityLowLimit());
    assertEquals(13, e.getPriorityHighLimit());
  }

  @Test
  public void badExportsFallBackToTezsNaturalOrderAndSayWhy() throws Exception {
    // Another DAG's order.
    File other = tmp.newFile("other.json");
    write(other, "{\"format\": \"graphene-tez/2\", \"dag\": \"q21\", \"vertices\": [], \"tasks\": []}");
    System.setProperty(GrapheneDAGScheduler.PROPERTY, other.getPath());
    GrapheneDAGScheduler s = new GrapheneDAGScheduler(dag, handler);
    assertTrue(s.loadError(), s.loadError().contains("'q21', not of 'example'"));
    assertNull(s.order());
    // Natural order: agg at depth 1 of 4, id 1: (1 + 1) * 4 * 3 + 1 * 3 = 27.
    TaskAttemptEventSchedule e = schedule(s, 1, 0, 0, 1);
    assertEquals(27, e.getPriorityLowLimit());
    assertEquals(25, e.getPriorityHighLimit());

    String[][] cases = {
        {"{\"format\": \"graphene-tez/3\", \"dag\": \"example\"}", "format 'graphene-tez/3'"},
        {"{\"format\": \"graphene-tez/2\", \"dag\": \"example\", \"vertices\": [{\"name\": \"a\"}], \"tasks\": []}",
            "vertices[0].low: missing"},
        {"{\"format\": \"graphene-tez/2\", \"dag\": \"example\", \"vertices\": [], \"tasks\": "
            + "[{\"vertex\": \"a\", \"index\": 0, \"low\": 1, \"high\": 3}]}", "is not 1 <= high <= low"},
        {"{\"format\": \"graphene-tez/2\", \"dag\": ", "not JSON"},
    };
    for (String[] c : cases) {
      File f = tmp.newFile();
      write(f, c[0]);
      System.setProperty(GrapheneDAGScheduler.PROPERTY, f.getPath());
      String why = new GrapheneDAGScheduler(dag, handler).loadError();
      assertNotNull(c[1], why);
      assertTrue(why, why.contains(c[1]) && why.contains(f.getPath()));
    }
    System.setProperty(GrapheneDAGScheduler.PROPERTY, tmp.getRoot() + "/missing.json");
    assertTrue(new GrapheneDAGScheduler(dag, handler).loadError().contains("missing.json"));
  }

  @Test
  public void withoutAnExportTheDagRunsInNaturalOrder() throws IOException {
    GrapheneDAGScheduler s = new GrapheneDAGScheduler(dag, handler);
    // (Unless the build machine sets the environment variable.)
    if (System.getenv(GrapheneDAGScheduler.ENV) == null) {
      assertTrue(s.loadError().contains(GrapheneDAGScheduler.PROPERTY));
      // scan: depth 0 of 4 vertices, id 0: (0 + 1) * 4 * 3 = 12.
      TaskAttemptEventSchedule e = schedule(s, 0, 0, 0, 1);
      assertEquals(12, e.getPriorityLowLimit());
      assertEquals(10, e.getPriorityHighLimit());
    }
  }
}
