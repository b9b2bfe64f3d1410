// The BeadStore contract against the br adapter over the fake br emulating br 0.1.30.
import { makeBrFixture } from '../support/fake-br/br-store-fixture.js';
import { defineBeadStoreContract } from './contract.js';

defineBeadStoreContract('br adapter over fake br 0.1.30', () => makeBrFixture({ version: '0.1.30' }));
