// A run's place in its admission queue (admission.ts): whether it asked for a slot and was granted one.
export class Slot {
  private wasGranted = false;
  private wasAsked = false;
  constructor(readonly queueId: string) {}

  get granted(): boolean {
    return this.wasGranted;
  }

  get asked(): boolean {
    return this.wasAsked;
  }

  grant(): void {
    this.wasGranted = true;
  }

  markAsked(): void {
    this.wasAsked = true;
  }
}
