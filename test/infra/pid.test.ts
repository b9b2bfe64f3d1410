// Group signals: never to the groups whose numbers mean "everyone" or "ourselves".
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signalGroup } from '../../src/infra/pid.js';

afterEach(() => vi.restoreAllMocks());

describe('signalGroup', () => {
  it('never signals pid 1, 0 or below (kill(-1) reaches every process the user may signal)', () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    for (const pid of [1, 0, -1, -42, 1.5, Number.NaN]) signalGroup(pid, 'SIGKILL');
    expect(kill).not.toHaveBeenCalled();
    signalGroup(4242, 'SIGTERM');
    expect(kill).toHaveBeenCalledWith(-4242, 'SIGTERM');
  });
});
