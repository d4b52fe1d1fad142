import { readdir, readFile } from 'node:fs/promises';

/**
 * Live processes of a process group, from /proc (zombies are left out: they hold nothing, and only their
 * parent, or init for orphans, can remove them). The long-lived engines (LibreOffice pool, Chromium) run each
 * in its own group: their memory is the sum over the group, and a shutdown is complete when the group is empty.
 */
export async function groupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // After "pid (comm) ": state, ppid, pgrp. comm may contain spaces and parentheses.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat && Number(group) === pgid && state !== 'Z') members.push(Number(name));
  }
  return members;
}

/** Resident memory of a group in bytes (VmRSS summed; shared pages count more than once, so it errs high). */
export async function groupRss(pgid: number): Promise<number> {
  let total = 0;
  for (const pid of await groupMembers(pgid)) {
    const rss = /VmRSS:\s+(\d+)\s+kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
    if (rss) total += Number(rss[1]) * 1024;
  }
  return total;
}

/** Kills a whole group and waits (up to `ms`) until none of it is alive. */
export async function killGroupAndWait(pgid: number | undefined, ms = 3000): Promise<void> {
  if (!pgid) return;
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* nothing left to signal */
    }
    if (!(await groupMembers(pgid)).length || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
