// A Java program for cabbpf's tests of the JVM (tests/test_lang_integration.c):
// its compiled code calls into the JVM's runtime (allocation slow paths,
// exceptions) while the garbage collector walks its threads' stacks.
// Deterministic output; argument: rounds.
import java.util.ArrayList;
import java.util.List;

public class JvmWork
{
	static int down(int n)
	{
		if (n == 0)
			throw new IllegalStateException("bottom");
		return down(n - 1) + 1;
	}

	static long work(int rounds, int seed)
	{
		List<int[]> keep = new ArrayList<>();
		long sum = 0;
		int caught = 0;
		for (int i = 0; i < rounds; i++) {
			try {
				if (i % 64 == 0)
					down(40);
				sum += i ^ seed;
			} catch (IllegalStateException e) {
				caught++;
			}
			keep.add(new int[16 + i % 512]);
			if (keep.size() > 2000)
				keep.clear();
		}
		return sum * 1000 + caught;
	}

	public static void main(String[] args) throws Exception
	{
		final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200000;
		final long[] r = new long[3];
		Thread[] ts = new Thread[r.length];
		for (int t = 0; t < ts.length; t++) {
			final int k = t;
			ts[t] = new Thread(() -> r[k] = work(rounds, k));
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		for (int t = 0; t < r.length; t++)
			System.out.println("thread " + t + ": " + r[t]);
	}
}
