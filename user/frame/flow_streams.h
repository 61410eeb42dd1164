/*
 * The stamp's stream ids of a test with flows (issue 26): which stream a
 * sending thread stamps a flow's frames with, and which flow the server
 * counts a stream into (its map stream_flow, bpf/meas_maps.h).
 *
 * Every stream has its own sequence numbers (the server's loss and
 * reordering are per stream), so a flow that T threads send is T streams,
 * all mapped to the flow. The stamp's stream is one byte: 256 streams.
 *   nflows * T <= 256: every thread sends every flow (1/T of its rate),
 *                      stream = f * T + t;
 *   otherwise:         flow f is sent by thread f % T alone, stream = f
 *                      (nflows <= 256, XP_SPEC_MAX_STREAMS).
 * A test with flows stamps from stream 0 (no stream_base).
 */
#ifndef XP_FRAME_FLOW_STREAMS_H
#define XP_FRAME_FLOW_STREAMS_H

#define XP_FLOW_MAX_STREAMS 256u
#define XP_FLOW_NO_STREAM   0xffffu

/* Streams the test uses: 0..n-1. */
unsigned xp_flow_nstreams(unsigned nflows, unsigned nthreads);
/* The stream thread t stamps flow f with, or XP_FLOW_NO_STREAM if t does not send f. */
unsigned xp_flow_stream_of(unsigned f, unsigned t, unsigned nflows, unsigned nthreads);
/* The flow stream s counts into (s < xp_flow_nstreams). */
unsigned xp_flow_of_stream(unsigned s, unsigned nflows, unsigned nthreads);
/* The share of flow f's rate that thread t sends: 1/T, 1 or 0. */
double xp_flow_share(unsigned f, unsigned t, unsigned nflows, unsigned nthreads);

#endif /* XP_FRAME_FLOW_STREAMS_H */
