import { expect } from "@jest/globals";
import { TestScheduler } from "rxjs/testing";

/** A TestScheduler whose frames are compared with Jest's deep equality. */
export const marbles = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
