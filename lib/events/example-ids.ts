/** The IDs the event examples share, so an example's ChangeOrder, Space and user are the same throughout. */
export const ORG = '6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b';
export const BASE = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
export const PROD = '7b8c9d0e-1f2a-4b3c-9d4e-5f6a7b8c9d0e';
export const CO = 'c0ffee00-1234-4abc-8def-0123456789ab';
export const RELEASE = 'a1b2c3d4-e5f6-4a7b-8c9d-e0f1a2b3c4d5';
export const TARGET = 'b2c3d4e5-f6a7-4b8c-9d0e-f1a2b3c4d5e6';
export const ATTESTATION = 'd4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f7a';
export const USER = 'e5f6a7b8-c9d0-4e1f-9a2b-3c4d5e6f7a8b';
export const id = (n: number) => `0e0e0e0e-0000-4000-8000-${String(n).padStart(12, '0')}`;
