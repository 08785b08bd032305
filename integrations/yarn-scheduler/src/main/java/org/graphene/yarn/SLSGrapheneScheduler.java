package org.graphene.yarn;

import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.scheduler.SLSSchedulerCommons;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.Tracker;

/**
 * {@link GrapheneScheduler} under YARN's Scheduler Load Simulator: SLS needs its scheduler to
 * be a {@link SchedulerWrapper} (it times every allocate and event for its metrics), as its own
 * SLSCapacityScheduler wraps the CapacityScheduler. The metrics are SLS's FifoScheduler ones
 * (one queue, `default`); the scheduling is GrapheneScheduler's, unchanged. Used by
 * {@code scripts/yarn-sls --scheduler graphene}; needs hadoop-sls on the classpath.
 */
public class SLSGrapheneScheduler extends GrapheneScheduler implements SchedulerWrapper {
  private final SLSSchedulerCommons commons = new SLSSchedulerCommons(this);
  private SLSRunner runner;

  @Override
  public synchronized void setConf(Configuration conf) {
    super.setConf(conf);
    commons.initMetrics(FifoScheduler.class, conf);
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return commons.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions, blacklistRemovals,
        updateRequests);
  }

  @Override
  public Allocation allocatePropagated(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return super.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions, blacklistRemovals,
        updateRequests);
  }

  @Override
  public void handle(SchedulerEvent event) {
    commons.handle(event);
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    super.handle(event);
  }

  @Override
  public String getRealQueueName(String queue) {
    return "default";
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return commons.getSchedulerMetrics();
  }

  @Override
  public Tracker getTracker() {
    return commons.getTracker();
  }

  @Override
  public void setSLSRunner(SLSRunner runner) {
    this.runner = runner;
  }

  @Override
  public SLSRunner getSLSRunner() {
    return runner;
  }
}
