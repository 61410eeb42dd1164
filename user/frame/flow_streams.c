/* The stamp's stream ids of a test with flows: see flow_streams.h. */
#include "frame/flow_streams.h"

static unsigned threads_of(unsigned nthreads)
{
	return nthreads ? nthreads : 1;
}

static int every_thread(unsigned nflows, unsigned nthreads)
{
	return (unsigned long)nflows * threads_of(nthreads) <= XP_FLOW_MAX_STREAMS;
}

unsigned xp_flow_nstreams(unsigned nflows, unsigned nthreads)
{
	return every_thread(nflows, nthreads) ? nflows * threads_of(nthreads) : nflows;
}

unsigned xp_flow_stream_of(unsigned f, unsigned t, unsigned nflows, unsigned nthreads)
{
	unsigned T = threads_of(nthreads);
	if (f >= nflows || t >= T)
		return XP_FLOW_NO_STREAM;
	if (every_thread(nflows, nthreads))
		return f * T + t;
	return f % T == t ? f : XP_FLOW_NO_STREAM;
}

unsigned xp_flow_of_stream(unsigned s, unsigned nflows, unsigned nthreads)
{
	return every_thread(nflows, nthreads) ? s / threads_of(nthreads) : s;
}

double xp_flow_share(unsigned f, unsigned t, unsigned nflows, unsigned nthreads)
{
	if (xp_flow_stream_of(f, t, nflows, nthreads) == XP_FLOW_NO_STREAM)
		return 0;
	return every_thread(nflows, nthreads) ? 1.0 / threads_of(nthreads) : 1.0;
}
